import path from 'node:path';
import {fail} from '../../errors.js';
import {isSafeSegment, isScenarioName} from './segments.js';

/** The team's defaults file at the knowledge root. */
export const TEAM_CONFIG_NAME = 'autoctx.config.json';

/** The name of the per-machine state area inside the knowledge root (ARCHITECTURE §11). */
export const STATE_DIR_NAME = '.state';

/** Paths at the root of the knowledge tree: root-level documents, the state area, the scenarios. */
export class RootPaths {
  constructor(readonly root: string) {}

  get gitignore(): string {
    return path.join(this.root, '.gitignore');
  }
  /** How git checks out and merges the tree (autoctx's block: src/store/kinds/common/gitattributes.ts). */
  get gitattributes(): string {
    return path.join(this.root, '.gitattributes');
  }
  /** A temporary file an interrupted write of the root's .gitattributes left. */
  isGitattributesTemp(name: string): boolean {
    return /^\.\.gitattributes\.autoctx-[0-9a-z]+\.tmp$/.test(name);
  }
  /** The team's evaluation defaults, committed with the tree. */
  get teamConfig(): string {
    return path.join(this.root, TEAM_CONFIG_NAME);
  }
  /** A temporary file an interrupted write of the root's .gitignore left. */
  isGitignoreTemp(name: string): boolean {
    return /^\.\.gitignore\.autoctx-[0-9a-z]+\.tmp$/.test(name);
  }
  scenarioDir(name: string): string {
    return path.join(this.root, name);
  }
  /** The folder whose presence makes a root-level folder a scenario store. */
  scenarioStore(name: string): string {
    return path.join(this.root, name, 'context_bundles');
  }
  get stateDir(): string {
    return path.join(this.root, STATE_DIR_NAME);
  }
  /** A file in the state area, from safe segments only. */
  stateFile(...segments: string[]): string {
    for (const s of segments)
      if (!isSafeSegment(s) && !isScenarioName(s))
        fail('INVALID_NAME', `not a safe state-area name: ${JSON.stringify(s)}`);
    return path.join(this.stateDir, ...segments);
  }
  /** The state area's own lock (it also guards root-level documents such as .gitignore). */
  get stateLock(): string {
    return path.join(this.stateDir, 'autoctx.lock');
  }
  get stateLockTarget(): string {
    return path.join(this.stateDir, 'autoctx');
  }
  /** The state area ignores itself, whatever the root's .gitignore says. */
  get stateGitignore(): string {
    return path.join(this.stateDir, '.gitignore');
  }
}
