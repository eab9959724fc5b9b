import fs from 'node:fs';
import path from 'node:path';
import {fail, isSystemError, rethrowUnless} from '../errors.js';
import {exists, listDir, mkdirDurable, mkdirs, RootGuard} from './files/fs.js';
import {walkTree} from './files/tree-walk.js';
import {readGitattributes, updateGitattributes, type GitattributesState} from './kinds/common/gitattributes.js';
import {readGitignore, updateGitignore, type GitignoreState} from './kinds/common/gitignore.js';
import {
  readApprovalWindowDays,
  readEvaluationDefaults,
  readEvidenceSettings,
  type EvaluationDefaults,
  type EvidenceSettings,
} from './kinds/common/team-config.js';
import {assertScenarioName, isScenarioName, RootPaths, STATE_DIR_NAME} from './paths.js';
import {ScenarioStore} from './scenario-store.js';
import {StateArea} from './state-area.js';

export {GITIGNORE_LINES} from './kinds/common/gitignore.js';

/**
 * Where the knowledge root is: --knowledge, else AUTOCTX_KNOWLEDGE (both relative to the working folder), else found as
 * git finds its repository: from the working folder up, the first folder F for which F/knowledge, or else F itself, is
 * a knowledge root (isKnowledgeRoot). The walk stops after the top of a git work tree (a folder holding .git) or at
 * the file system's root; when it finds none, ./knowledge (where init creates one).
 */
export function knowledgeRootFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd = process.cwd(),
): string {
  const fromEnv = env.AUTOCTX_KNOWLEDGE === '' ? undefined : env.AUTOCTX_KNOWLEDGE;
  const given = flag ?? fromEnv;
  if (given !== undefined) return path.resolve(cwd, given);
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    const below = path.join(dir, DEFAULT_ROOT_NAME);
    if (isKnowledgeRoot(below)) return below;
    if (isKnowledgeRoot(dir)) return dir;
    if (fs.existsSync(path.join(dir, '.git')) || path.dirname(dir) === dir) break;
  }
  return path.resolve(cwd, DEFAULT_ROOT_NAME);
}

/** The folder a knowledge root is looked for under, and init creates by default. */
const DEFAULT_ROOT_NAME = 'knowledge';

/**
 * Whether a folder is a knowledge root: it holds autoctx's state area (.state/, which init writes), or a scenario
 * folder holding a context_bundles store (a tree the Python implementation wrote has no state area). Links are not
 * followed.
 */
export function isKnowledgeRoot(dir: string): boolean {
  let entries: fs.Dirent[];
  try {
    if (!fs.lstatSync(dir).isDirectory()) return false;
    entries = fs.readdirSync(dir, {withFileTypes: true});
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
  return entries.some(
    (e) =>
      e.isDirectory() &&
      (e.name === STATE_DIR_NAME || (isScenarioName(e.name) && isRealFolder(new RootPaths(dir).scenarioStore(e.name)))),
  );
}

function isRealFolder(p: string): boolean {
  try {
    return fs.lstatSync(p).isDirectory();
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return false;
  }
}

/**
 * A root-level entry that verify does not know: a hidden or otherwise refused name holding a scenario store, or a state
 * area that is not a folder.
 */
export interface UnknownRootEntry {
  file: string;
  /**
   * UNSAFE_PATH for what stands where a real folder must (a link, a file for the state area), UNKNOWN_ENTRY otherwise.
   */
  code: 'UNSAFE_PATH' | 'UNKNOWN_ENTRY';
  why: string;
}

/**
 * The knowledge root: root-level documents, the state area, and a folder of scenarios, each with a context_bundles
 * store.
 */
export class KnowledgeStore {
  readonly guard: RootGuard;
  readonly paths: RootPaths;

  private constructor(readonly root: string) {
    this.guard = new RootGuard(root);
    this.paths = new RootPaths(this.guard.root);
  }

  /** Open an existing root. */
  static open(root: string): KnowledgeStore {
    let st: fs.Stats;
    try {
      st = fs.statSync(root);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      fail('KNOWLEDGE_NOT_FOUND', `no knowledge folder at ${root} (use --knowledge DIR, or run autoctx init)`, {
        knowledge: root,
      });
    }
    if (!st.isDirectory()) fail('KNOWLEDGE_NOT_FOUND', `${root} is not a folder`, {knowledge: root});
    return new KnowledgeStore(root);
  }

  /** Open a root, creating the folder when it does not exist yet. */
  static create(root: string): KnowledgeStore {
    if (!exists(root)) mkdirs(root);
    const store = KnowledgeStore.open(root);
    mkdirDurable(store.guard, store.root);
    return store;
  }

  /** Scenario folders that hold a context_bundles store, sorted. */
  listScenarios(): string[] {
    return listDir(this.guard, this.root)
      .filter((e) => e.isDirectory() && isScenarioName(e.name))
      .filter((e) => exists(this.paths.scenarioStore(e.name)))
      .map((e) => e.name);
  }

  /**
   * Root-level entries verify cannot account for: a folder holding a scenario
   * store under a name autoctx refuses (it would never be read or verified),
   * and a state area that is not a real folder. The state area itself is
   * skipped, and nothing else.
   */
  unknownRootEntries(): UnknownRootEntry[] {
    const out: UnknownRootEntry[] = [];
    for (const e of listDir(this.guard, this.root)) {
      if (e.name === STATE_DIR_NAME) {
        if (!e.isDirectory())
          out.push({
            file: e.name,
            code: 'UNSAFE_PATH',
            why: `${e.name} is not a folder: the state area must be a real folder inside the root`,
          });
        continue;
      }
      if (e.isSymbolicLink()) {
        // A link at the root (a scenario folder pointing elsewhere, say) is never followed, so never verified: an
        // error, not a silent skip.
        out.push({
          file: e.name,
          code: 'UNSAFE_PATH',
          why:
            `${e.name} is a symbolic link: verify never follows a link out of the root, so whatever it ` +
            `points at is not verified`,
        });
        continue;
      }
      const named = isScenarioName(e.name);
      if (!named && e.isDirectory() && exists(this.paths.scenarioStore(e.name)))
        out.push({
          file: e.name,
          code: 'UNKNOWN_ENTRY',
          why:
            `${e.name}/ holds a context store under a name autoctx refuses (hidden or unsafe), so it is ` +
            `never read or verified`,
        });
    }
    return out;
  }

  /**
   * Scenario folders whose names differ as written but are equal after
   * Unicode normalization (NFC): each group, sorted. The names are used
   * exactly as written; comparing them normalized is the one place
   * normalization enters, because a person (or a file system that
   * normalizes) cannot tell such folders apart.
   */
  scenarioCollisions(): string[][] {
    const groups = new Map<string, string[]>();
    for (const name of this.listScenarios()) {
      const key = name.normalize('NFC');
      groups.set(key, [...(groups.get(key) ?? []), name]);
    }
    return [...groups.values()].filter((g) => g.length > 1);
  }

  /**
   * Refuse a scenario whose name another folder's equals after NFC (INVALID_NAME): used before reading or creating it.
   */
  assertNoTwin(name: string): void {
    const twin = this.listScenarios().find(
      (other) => other !== name && other.normalize('NFC') === name.normalize('NFC'),
    );
    if (twin !== undefined)
      fail(
        'INVALID_NAME',
        `scenario "${name}" and the folder "${twin}" are the same name after Unicode normalization (NFC); ` +
          `rename one of them`,
        {scenario: name},
      );
  }

  /** The named scenario, or the only one when the name is left out. */
  resolveScenario(name: string | undefined): string {
    if (name !== undefined) {
      assertScenarioName(name);
      this.assertNoTwin(name);
      if (!exists(this.paths.scenarioStore(name))) {
        const known = this.listScenarios();
        fail(
          'SCENARIO_NOT_FOUND',
          `no scenario "${name}" in ${this.root}${known.length ? ` (known: ${known.join(', ')})` : ''}`,
          {scenario: name},
        );
      }
      return name;
    }
    const all = this.listScenarios();
    if (all.length === 1) return all[0]!;
    const twins = this.scenarioCollisions()[0];
    if (twins)
      fail(
        'INVALID_NAME',
        `scenario folders ${twins.map((t) => `"${t}"`).join(' and ')} are the same name after Unicode ` +
          `normalization (NFC); rename one of them`,
      );
    if (all.length === 0)
      fail('SCENARIO_NOT_FOUND', `no scenario in ${this.root}; run autoctx init --scenario S --from SRC`);
    fail(
      'SCENARIO_REQUIRED',
      `${this.root} holds ${all.length} scenarios (${all.join(', ')}); name one with --scenario`,
    );
  }

  /**
   * How a command signs a step of a signed scenario that did not prepare its signing itself (set by the command's
   * options; null: it cannot).
   */
  lateSigning: ((store: ScenarioStore) => void) | null = null;

  scenario(name: string): ScenarioStore {
    assertScenarioName(name);
    const store = new ScenarioStore(this.guard, name);
    const late = this.lateSigning;
    if (late) store.lateSigning = () => late(store);
    return store;
  }

  /** The team's evaluation defaults for a scenario (knowledge/autoctx.config.json), {} when there is none. */
  evaluationDefaults(scenario: string): EvaluationDefaults {
    return readEvaluationDefaults(this.guard, this.paths.teamConfig, scenario);
  }

  /** The team's approval window for emergency rollbacks, in days (undefined: the default). */
  approvalWindowDays(): number | undefined {
    return readApprovalWindowDays(this.guard, this.paths.teamConfig);
  }

  /** The team's delivery evidence settings (autoctx.config.json "evidence"), {} for the defaults. */
  evidenceSettings(): EvidenceSettings {
    return readEvidenceSettings(this.guard, this.paths.teamConfig);
  }

  /** The per-machine state area, knowledge/.state/. */
  state(): StateArea {
    return new StateArea(this.guard);
  }

  /** Every regular file of the root but the state area's, relative to the root and `/`-separated, sorted. */
  files(): string[] {
    const state = path.join(this.root, STATE_DIR_NAME);
    return walkTree(this.guard, this.root)
      .filter((e) => e.kind === 'file' && e.path !== state && !e.path.startsWith(state + path.sep))
      .map((e) => path.relative(this.root, e.path).split(path.sep).join('/'));
  }

  /** What the root's .gitignore lacks, or null when there is none. */
  gitignore(): GitignoreState | null {
    return readGitignore(this.guard);
  }

  /**
   * Bring the root's .gitignore up to date (creating it when `create`), under
   * the state area's lock. Returns the rules added.
   */
  async ensureGitignore(timeoutSeconds: number, options: {create: boolean}): Promise<string[]> {
    const state = this.state();
    // An interrupted earlier write of this file leaves its temporary file here.
    const leftovers = listDir(this.guard, this.root).filter((e) => e.isFile() && this.paths.isGitignoreTemp(e.name));
    const current = readGitignore(this.guard);
    if (leftovers.length === 0 && current !== null && current.removed.length === 0 && current.outdated.length === 0)
      return [];
    if (current === null && !options.create) return [];
    return state.withLock(timeoutSeconds, () => {
      for (const e of leftovers) state.writer.remove(path.join(this.root, e.name));
      return updateGitignore(state.writer, options);
    });
  }

  /** What the root's .gitattributes holds of autoctx's block. */
  gitattributes(): GitattributesState {
    return readGitattributes(this.guard);
  }

  /**
   * Write autoctx's block of the root's .gitattributes when it is not in place (the file, appended to a person's own,
   * or restored), under the state area's lock; a missing block only when `create`. Returns what was done, or null.
   */
  async ensureGitattributes(
    timeoutSeconds: number,
    options: {create: boolean},
  ): Promise<'written' | 'appended' | 'restored' | null> {
    const leftovers = listDir(this.guard, this.root).filter(
      (e) => e.isFile() && this.paths.isGitattributesTemp(e.name),
    );
    const current = readGitattributes(this.guard);
    const write =
      current.state === 'edited' || current.state === 'outdated' || (current.state === 'absent' && options.create);
    if (leftovers.length === 0 && !write) return null;
    const state = this.state();
    return state.withLock(timeoutSeconds, () => {
      for (const e of leftovers) state.writer.remove(path.join(this.root, e.name));
      return write ? updateGitattributes(state.writer) : null;
    });
  }
}
