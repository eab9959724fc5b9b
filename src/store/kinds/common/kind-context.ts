import type {RootGuard} from '../../files/fs.js';
import type {LockedWriter} from '../../files/locked-writer.js';
import type {ScenarioPaths} from '../../paths.js';

/** What a document kind's reader and writer work with inside one scenario store. */
export interface KindContext {
  readonly guard: RootGuard;
  readonly paths: ScenarioPaths;
  readonly scenario: string;
  /** The scenario's locked writer: every write refuses to run without the scenario lock. */
  readonly writer: LockedWriter;
  /** Signs the records ARCHITECTURE §10.3 names, when this use of the store signs (null: it does not). */
  readonly signer?: ((kind: string, digest: string) => string) | null;
}
