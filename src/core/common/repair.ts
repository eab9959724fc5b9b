import path from 'node:path';
import {sweepAbandonedEvaluationFolders, type ScenarioStore} from '../../store/index.js';
import type {RepairRun} from '../../store/kinds/common/kind-steps.js';
import {readSigningStart} from '../../store/kinds/signing/signing-records.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from './store-options.js';
import {SCENARIO_REPAIRS} from './kind-steps.generated.js';
import {checkActor} from './actor.js';
import {fail, isAutoctxError, rethrowUnless} from '../../errors.js';
import {scenarioDivergences} from '../../store/kinds/promotion/divergence.js';
import {DIVERGED_WAY_OUT} from '../../model/common/divergence-advice.js';

const GITATTRIBUTES_ACTIONS = {
  written: 'wrote .gitattributes (no end-of-line conversion, no silent merge of mutable documents)',
  appended: "appended autoctx's block to .gitattributes (the lines already there are kept)",
  restored: "restored autoctx's block in .gitattributes (the lines outside it are kept)",
} as const;

export interface RepairResult {
  status: 'repaired';
  scenarios: string[];
  actions: string[];
  remaining: string[];
}

/**
 * Complete or remove what an interrupted run left behind: lifecycles and
 * mirrors behind the pointer, missing discoverable copies of negative results,
 * temporary files, and legacy evidence whose replay reproduces its record
 * (rewritten as schema 2). What cannot be completed safely is listed, not
 * touched. Each scenario's steps are the ones its document kinds declare
 * (kind-steps.generated.ts), run in their order under the scenario lock.
 */
export async function repair(options: StoreOptions): Promise<RepairResult> {
  if (options.actor !== undefined) checkActor(options.actor);
  const knowledge = openKnowledge(options);
  const names =
    options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  // Repair completes what one clone's interrupted command left; across a merge of two clones' histories it would
  // complete one side over the other and make the divergence permanent. Refused before anything is touched.
  for (const name of names) {
    const store = knowledge.scenario(name);
    const found = scenarioDivergences(store);
    const first = found[0];
    if (first) {
      const [a, b] = first.files.map((f) => store.guard.relative(f));
      fail(
        'DIVERGED',
        `${a} and ${b} contradict each other` +
          `${found.length > 1 ? ` (and ${found.length - 1} more in scenario "${name}")` : ''}; repair ` +
          `completes nothing across a divergence and changed nothing: ${DIVERGED_WAY_OUT}`,
        {scenario: name, files: [a, b], divergences: found.length},
      );
    }
  }
  const actions: string[] = [];
  const remaining: string[] = [];
  const runOf = (store: ScenarioStore, into: {actions: string[]; remaining: string[]}): RepairRun => ({
    store,
    signed: readSigningStart(store) !== null,
    rel: (p) => path.relative(knowledge.root, p),
    now: () => now(options),
    actor: options.actor,
    ...into,
  });
  const stores = names.map((name) => knowledge.scenario(name));
  const steps = (run: RepairRun, rehearse = false) =>
    run.store.withLock(
      lockTimeout(options),
      () => {
        for (const step of SCENARIO_REPAIRS) step.repair(run);
      },
      rehearse,
    );
  // A signed scenario this run has no key for is refused right before its first change of a file the signed chain
  // tracks. Each such scenario is rehearsed (and put back) before anything else is repaired, so that its refusal
  // leaves every scenario, and the root, as they were.
  if (stores.length > 1)
    for (const store of stores) {
      if (readSigningStart(store) === null || !store.lateSigning) continue;
      try {
        store.lateSigning();
      } catch (error) {
        rethrowUnless(error, isAutoctxError);
        await steps(runOf(store, {actions: [], remaining: []}), true);
      }
    }
  // Evaluation folders (autoctx-bundles-*) left by runs that died: they are per machine, outside the tree.
  for (const dir of sweepAbandonedEvaluationFolders())
    actions.push(`removed ${dir}, the evaluation folder of a run that died`);
  for (const store of stores) await steps(runOf(store, {actions, remaining}));
  // The root's .gitattributes: written in a tree autoctx made before it wrote one (the root's .gitignore is autoctx's
  // mark; a tree another implementation wrote is left as it is), its block restored where it was edited.
  const attributes = await knowledge.ensureGitattributes(lockTimeout(options), {
    create: knowledge.gitignore() !== null,
  });
  if (attributes !== null) actions.push(GITATTRIBUTES_ACTIONS[attributes]);
  // The state area's leftovers: writing commands and hooks sweep only the folders they write into.
  const area = knowledge.state();
  if (area.exists()) {
    const removed = await area.withLock(lockTimeout(options), () => area.sweepAll());
    for (const file of removed) actions.push(`removed ${path.relative(knowledge.root, file)}`);
  }
  return {status: 'repaired', scenarios: names, actions, remaining};
}
