import fs from 'node:fs';
import path from 'node:path';
import {fail} from '../errors.js';
import {atomicWrite, exists, listDir, mkdirDurable, readBytes, RootGuard} from './fs.js';
import {assertScenarioName, isSafeSegment} from './paths.js';
import {ScenarioStore} from './scenario-store.js';

export const GITIGNORE_LINES = ['# autoctx: lock and temporary files are never committed', '*.tmp', 'autoctx.lock/', 'autoctx.lock.stale-*/', '.lock', '.false-promotion.lock'];

/** Where the knowledge root is: --knowledge, else AUTOCTX_KNOWLEDGE, else ./knowledge. */
export function knowledgeRootFrom(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const fromEnv = env.AUTOCTX_KNOWLEDGE === '' ? undefined : env.AUTOCTX_KNOWLEDGE;
  return path.resolve(cwd, flag ?? fromEnv ?? 'knowledge');
}

/** The knowledge root: a folder of scenarios, each with a context_bundles store. */
export class KnowledgeStore {
  readonly guard: RootGuard;

  private constructor(readonly root: string) {
    this.guard = new RootGuard(root);
  }

  /** Open an existing root. */
  static open(root: string): KnowledgeStore {
    let st: fs.Stats;
    try {
      st = fs.statSync(root);
    } catch {
      fail('KNOWLEDGE_NOT_FOUND', `no knowledge folder at ${root} (use --knowledge DIR, or run autoctx init)`, {knowledge: root});
    }
    if (!st.isDirectory()) fail('KNOWLEDGE_NOT_FOUND', `${root} is not a folder`, {knowledge: root});
    return new KnowledgeStore(root);
  }

  /** Open a root, creating the folder when it does not exist yet. */
  static create(root: string): KnowledgeStore {
    if (!exists(root)) fs.mkdirSync(root, {recursive: true});
    const store = KnowledgeStore.open(root);
    mkdirDurable(store.guard, store.root);
    return store;
  }

  /** Scenario folders that hold a context_bundles store, sorted. */
  listScenarios(): string[] {
    return listDir(this.guard, this.root)
      .filter((e) => e.isDirectory() && isSafeSegment(e.name) && !e.name.startsWith('.'))
      .filter((e) => exists(path.join(this.root, e.name, 'context_bundles')))
      .map((e) => e.name);
  }

  /** The named scenario, or the only one when the name is left out. */
  resolveScenario(name: string | undefined): string {
    if (name !== undefined) {
      assertScenarioName(name);
      if (!exists(path.join(this.root, name, 'context_bundles'))) {
        const known = this.listScenarios();
        fail('SCENARIO_NOT_FOUND', `no scenario "${name}" in ${this.root}${known.length ? ` (known: ${known.join(', ')})` : ''}`, {scenario: name});
      }
      return name;
    }
    const all = this.listScenarios();
    if (all.length === 1) return all[0]!;
    if (all.length === 0) fail('SCENARIO_NOT_FOUND', `no scenario in ${this.root}; run autoctx init --scenario S --from SRC`);
    fail('SCENARIO_REQUIRED', `${this.root} holds ${all.length} scenarios (${all.join(', ')}); name one with --scenario`);
  }

  scenario(name: string): ScenarioStore {
    assertScenarioName(name);
    return new ScenarioStore(this.guard, name);
  }

  /** The rules autoctx needs that the root's .gitignore lacks, or null when there is no .gitignore. */
  missingGitignoreRules(): {file: string; missing: string[]} | null {
    const file = path.join(this.root, '.gitignore');
    const current = readBytes(this.guard, file)?.toString('utf8');
    if (current === undefined) return null;
    const have = new Set(current.split(/\r?\n/));
    return {file, missing: GITIGNORE_LINES.filter((l) => !l.startsWith('#') && !have.has(l))};
  }

  /** Make sure the root's .gitignore keeps lock and temp files out of git. */
  ensureGitignore(): void {
    const file = path.join(this.root, '.gitignore');
    // An interrupted earlier write of this file leaves its temporary file here.
    for (const e of listDir(this.guard, this.root)) if (e.isFile() && /^\.\.gitignore\.autoctx-[0-9a-z]+\.tmp$/.test(e.name)) fs.rmSync(path.join(this.root, e.name), {force: true});
    const current = readBytes(this.guard, file)?.toString('utf8') ?? '';
    const have = new Set(current.split(/\r?\n/));
    const missing = GITIGNORE_LINES.filter((l) => !have.has(l));
    if (missing.length === 0) return;
    const prefix = current === '' || current.endsWith('\n') ? current : `${current}\n`;
    atomicWrite(this.guard, file, `${prefix}${missing.join('\n')}\n`);
  }
}
