import path from 'node:path';
import {isAutoctxError} from '../../errors.js';
import {type CandidateRecord} from '../../model/promotion/records.js';
import type {Mark, VerifyIssue} from '../../store/findings.js';
import {Findings} from '../../store/scenario-findings.js';
import type {CandidateFacts, ScenarioFacts, ScenarioView} from '../../store/kinds/common/kind-steps.js';
import {readAnchor} from '../signing/trust.js';
import {approvalWindowOf} from '../rollback/rollback-records.js';
import {listBundleDigests, verifyBundle} from '../../store/kinds/bundle/bundle.js';
import {listCandidateDigests} from '../../store/kinds/promotion/candidate-record.js';
import {verifyLeftovers} from '../../store/kinds/common/leftovers.js';
import {now, openKnowledge, type StoreOptions} from './store-options.js';
import {ManifestChecks, ManifestHelper, manifestOutline} from '../bundle/verify-manifests.js';
import {CANDIDATE_CHECKS, SCENARIO_CHECKS, START_CHECKS} from './kind-steps.generated.js';
import {EVERY_STEP, step, type VerifySteps} from './verify-steps.js';
import {checkExtends} from './extends.js';

export type {VerifyIssue} from '../../store/findings.js';
export type {StepOutput, VerifySteps} from './verify-steps.js';

export interface VerifyResult {
  status: 'ok' | 'failed';
  scenarios: string[];
  files_checked: number;
  bundles_checked: number;
  errors: VerifyIssue[];
  warnings: VerifyIssue[];
  /** Accepted on another implementation's files alone (no seal, an unrecorded pointer move). */
  notes: VerifyIssue[];
  /** The head of each signed scenario's state chain: what an anchor pins (`# autoctx-chain <scenario> <sha256>`). */
  chain_heads?: Record<string, string>;
}

/**
 * verify runs the checks each document kind declares (src/store/kinds, and
 * the few of src/core that need a use case), as kind-steps.generated.ts lists
 * them in their order: manifests first (the others compare against them),
 * then each candidate's checks, then the checks of the whole scenario. Every
 * check runs even after a failure.
 */

/** Run one group of checks; a refusal it runs into (a link out of the tree, say) becomes an error entry. */
function guarded(c: Findings, where: string, fn: () => void): void {
  try {
    fn();
  } catch (error) {
    if (!isAutoctxError(error)) throw error;
    c.error(c.store.guard.absolute((error.data?.file as string | undefined) ?? where), error.code, error.message);
  }
}

/** The walk of the scenario, then its manifests' digests (none when they cannot be listed: that error is recorded). */
function manifestDigests(c: Findings): string[] {
  const where = c.store.paths.contextDir;
  guarded(c, where, () => verifyLeftovers(c));
  let digests: string[] = [];
  guarded(c, where, () => {
    digests = listBundleDigests(c.store);
  });
  return digests;
}

/**
 * The candidates are checked before the manifests' own findings are
 * recorded, asking for each manifest as a candidate needs it, so that a
 * helper thread checks the others meanwhile; the manifests' findings are then
 * put before the candidates', and every answer is the one of checking the
 * manifests first. Then each check of the whole scenario, in its order.
 */
function verifyScenario(c: Findings, manifests: ManifestChecks, steps: VerifySteps = EVERY_STEP): void {
  const where = c.store.paths.contextDir;
  const mark = c.mark();
  const facts: Partial<ScenarioFacts> = {};
  const candidates: Array<ScenarioView['candidates'][number]> = [];
  c.withOutlines(
    (digest) => (steps.shared ? steps.shared(digest, () => manifests.outline(digest)) : manifests.outline(digest)),
    () => guarded(c, where, () => candidates.push(...checkCandidates(c, manifests, facts, steps))),
  );
  c.reportBefore(mark, () =>
    guarded(c, where, () => {
      for (const check of manifests.all()) {
        const outline = c.attempt(c.store.paths.bundle(check.digest), () => manifestOutline(check));
        if (outline) verifyBundle(c, check.digest, outline);
      }
    }),
  );
  const records = new Map<string, CandidateRecord>();
  for (const x of candidates) if (x.complete && x.facts.record) records.set(x.digest, x.facts.record);
  const view: ScenarioView = {facts, candidates, records};
  // A scenario's check is handed the view and the manifests that verified (c.bundle(), an outline each: a manifest is
  // content-addressed).
  // By default every step runs as it is: no step is named, handed or kept (a sweep that answers steps asks for that).
  const direct = steps === EVERY_STEP;
  const handed = direct ? null : {view, bundles: [...c.bundles.keys()]};
  for (const check of SCENARIO_CHECKS) {
    if (direct) guarded(c, where, () => check.scenario(c, view));
    else guarded(c, where, () => step(c, steps, `scenario ${check.order}`, handed, {}, () => check.scenario(c, view)));
  }
}

/**
 * Each candidate's checks, from the front of the list and, whenever the
 * helper has checked the manifests it needs, the next from the back; each
 * candidate's findings are then put in the order of the list, as if they had
 * been checked in it.
 */
function checkCandidates(
  c: Findings,
  manifests: ManifestChecks,
  facts: Partial<ScenarioFacts>,
  steps: VerifySteps,
): ScenarioView['candidates'] {
  const where = c.store.paths.contextDir;
  const direct = steps === EVERY_STEP;
  for (const check of START_CHECKS) {
    if (direct) check.start(c, facts);
    else step(c, steps, `start ${check.order}`, {...facts}, facts, () => check.start(c, facts));
  }
  const digests = listCandidateDigests(c.store);
  const found: Array<{digest: string; facts: Partial<CandidateFacts>; complete: boolean}> = [];
  const blocks: Array<[Mark, Mark]> = [];
  const start = c.mark();
  for (let front = 0, back = digests.length - 1; front <= back; ) {
    const i = manifests.ready(digests[back]!) ? back-- : front++;
    const before = c.mark();
    const entry = {digest: digests[i]!, facts: {}, complete: false};
    found[i] = entry;
    guarded(c, where, () => {
      for (const check of CANDIDATE_CHECKS) {
        if (direct) {
          check.candidate(c, entry.digest, entry.facts, facts);
          continue;
        }
        const handed = {facts: {...entry.facts}, scenario: facts};
        step(c, steps, `candidate ${entry.digest} ${check.order}`, handed, entry.facts, () =>
          check.candidate(c, entry.digest, entry.facts, facts),
        );
      }
      entry.complete = true;
    });
    blocks[i] = [before, c.mark()];
  }
  c.arrange(start, blocks);
  return found;
}

type VerifyOptions = StoreOptions & {
  replayTolerance?: boolean;
  allowedSigners?: string | undefined;
  /** How the steps run (default: every one); see VerifySteps. */
  steps?: VerifySteps;
  /** A git revision whose knowledge history this tree must extend (checkExtends). */
  extends?: string | undefined;
};

/** The root-level checks (the .gitignore, entries verify cannot account for), then one Findings per scenario. */
function start(options: VerifyOptions): {result: VerifyResult; checkers: Findings[]} {
  const knowledge = openKnowledge(options);
  const names =
    options.scenario !== undefined ? [knowledge.resolveScenario(options.scenario)] : knowledge.listScenarios();
  const result: VerifyResult = {
    status: 'ok',
    scenarios: names,
    files_checked: 0,
    bundles_checked: 0,
    errors: [],
    warnings: [],
    notes: [],
  };
  const ignore = knowledge.gitignore();
  if (ignore) {
    result.files_checked++;
    const rel = path.relative(knowledge.root, ignore.file);
    const quoted = (lines: string[]) => lines.map((l) => `"${l}"`).join(', ');
    if (ignore.removed.length > 0) {
      result.errors.push({
        severity: 'error',
        code: 'GITIGNORE_INCOMPLETE',
        file: rel,
        message:
          `${rel} lacks ${quoted(ignore.removed)}: lock and temporary files could be committed (any writing ` +
          `command or autoctx repair restores the rules)`,
      });
    }
    if (ignore.outdated.length > 0) {
      result.warnings.push({
        severity: 'warning',
        code: 'GITIGNORE_OUTDATED',
        file: rel,
        message:
          `${rel} lacks ${quoted(ignore.outdated)}, added by a newer autoctx than the one that made this ` +
          `tree (any writing command or autoctx repair adds them)`,
      });
    }
  }
  const attributes = knowledge.gitattributes();
  const attributesRel = path.relative(knowledge.root, attributes.file);
  if (attributes.present) result.files_checked++;
  // A tree another implementation wrote (no root .gitignore either) is not held to autoctx's root documents.
  if (attributes.state === 'absent' && ignore !== null)
    result.warnings.push({
      severity: 'warning',
      code: 'GITATTRIBUTES_MISSING',
      file: attributesRel,
      message:
        `${attributesRel} lacks autoctx's rules (a tree made before autoctx wrote them): git may convert ` +
        `line endings on checkout and merge mutable documents line by line (autoctx repair writes them)`,
    });
  else if (attributes.state === 'outdated')
    result.warnings.push({
      severity: 'warning',
      code: 'GITATTRIBUTES_MISSING',
      file: attributesRel,
      message:
        `${attributesRel} holds the block an earlier autoctx wrote, which leaves some files autoctx rewrites ` +
        `(signatures, runtime files) to git's line-by-line merge (autoctx repair writes the current block)`,
    });
  else if (attributes.state === 'edited')
    result.errors.push({
      severity: 'error',
      code: 'GITATTRIBUTES_MODIFIED',
      file: attributesRel,
      message:
        `${attributesRel}: ${attributes.why}: git may convert line endings or merge mutable ` +
        `documents silently (autoctx repair writes the block back; lines outside it are kept)`,
    });
  for (const e of knowledge.unknownRootEntries())
    result.errors.push({severity: 'error', code: e.code, file: e.file, message: e.why});
  for (const group of knowledge.scenarioCollisions()) {
    const message =
      `scenario folders ${group.map((g) => `"${g}"`).join(' and ')} are the same name after Unicode ` +
      `normalization (NFC): a person, or a file system that normalizes, cannot tell them apart; rename one ` +
      `of them`;
    for (const name of group) result.errors.push({severity: 'error', code: 'SCENARIO_COLLISION', file: name, message});
  }
  if (options.extends !== undefined) result.errors.push(...checkExtends(knowledge, options.extends));
  const windowDays = approvalWindowOf(knowledge, true);
  const at = now(options);
  const anchor = readAnchor(options.allowedSigners, options.knowledge);
  return {
    result,
    checkers: names.map(
      (name) => new Findings(knowledge.scenario(name), options.replayTolerance === true, at, windowDays, anchor),
    ),
  };
}

function add(result: VerifyResult, c: Findings): void {
  result.files_checked += c.filesChecked;
  result.bundles_checked += c.bundles.size;
  result.errors.push(...c.errors);
  result.warnings.push(...c.warnings);
  result.notes.push(...c.notes);
  if (c.chainHead !== null) result.chain_heads = {...result.chain_heads, [c.store.scenario]: c.chainHead};
}

function settle(result: VerifyResult): VerifyResult {
  if (result.errors.length > 0) result.status = 'failed';
  return result;
}

/**
 * Re-hash every manifest, check every file against its schema and digests and
 * every pointer against the files it names. Interrupted-but-repairable states
 * are warnings; anything else is an error (exit 8).
 */
export function verify(options: VerifyOptions): VerifyResult {
  const {result, checkers} = start(options);
  for (const c of checkers) {
    verifyScenario(c, ManifestChecks.sync(c.store, manifestDigests(c)), options.steps);
    add(result, c);
  }
  return settle(result);
}

/** verify, with a large scenario's manifests checked on two threads (verify-manifests.ts): the same result, sooner. */
export async function verifyInParallel(options: VerifyOptions): Promise<VerifyResult> {
  const {result, checkers} = start(options);
  for (const c of checkers) {
    const helper = ManifestHelper.startFor(c.store); // before the walk: it starts while this thread reads the tree
    try {
      verifyScenario(c, await ManifestChecks.open(c.store, manifestDigests(c), helper));
    } finally {
      helper?.stop();
    }
    add(result, c);
  }
  return settle(result);
}
