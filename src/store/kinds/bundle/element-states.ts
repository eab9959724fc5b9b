import fs from 'node:fs';
import path from 'node:path';
import {parseJsonUtf8, prettyJson, withOrigin} from '../../../canonical/index.js';
import {fail, isSystemError, rethrowUnless} from '../../../errors.js';
import {isNonPresentState, type NonPresentState} from '../../../model/bundle/element-state.js';
import {isComponentKind} from '../../../model/bundle/kinds.js';
import {readInputFile} from '../../io/input-files.js';

/**
 * element_states.json: the small manifest beside a source folder's component
 * folders that declares its non-present components (ABSENT, UNVERSIONED,
 * INCLUDED), which have no file. `bundle materialize` writes it, so a
 * materialized folder proposes back to the same digest.
 *
 *   {"schema_version": 1, "elements": [{"kind": "hints", "key": "hints", "state": "ABSENT", "media_type":
 *   "text/markdown"}]}
 *
 * media_type may be left out (text/plain).
 */
export const ELEMENT_STATES_FILE = 'element_states.json';

export interface DeclaredElement {
  kind: string;
  key: string;
  state: NonPresentState;
  media_type: string;
}

/** The file's text for a bundle's non-present components, or null when it has none (nothing is written). */
export function elementStatesFile(
  components: ReadonlyArray<{kind: string; key: string; media_type: string; state?: NonPresentState}>,
): string | null {
  const elements = components
    .filter((c) => c.state !== undefined)
    .map((c) => ({kind: c.kind, key: c.key, media_type: c.media_type, state: c.state!}));
  return elements.length === 0 ? null : prettyJson({schema_version: 1, elements});
}

/**
 * Read a source folder's element_states.json (none: an empty list). A link, FIFO or device is refused, as for any
 * source file.
 */
export function readElementStates(dir: string): DeclaredElement[] {
  const file = path.join(dir, ELEMENT_STATES_FILE);
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return [];
  }
  if (!st.isFile())
    fail(
      'INPUT_UNSAFE',
      `${file} is not a regular file (a link, FIFO or device): a source is read from regular files only`,
      {file},
    );
  const value = withOrigin(file, () => parseJsonUtf8(readInputFile(file, false)));
  const bad = (msg: string): never => fail('SCHEMA_VIOLATION', `${file}: ${msg}`, {file});
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    bad('expected {"schema_version": 1, "elements": [...]}');
  const v = value as Record<string, unknown>;
  const extra = Object.keys(v).filter((k) => k !== 'schema_version' && k !== 'elements');
  if (extra.length) bad(`unexpected property "${extra[0]}"`);
  if (v.schema_version !== 1) bad('schema_version must be 1');
  if (!Array.isArray(v.elements)) bad('"elements" must be an array');
  const seen = new Set<string>();
  return (v.elements as unknown[]).map((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad(`elements[${i}] must be an object`);
    const e = raw as Record<string, unknown>;
    const unknown = Object.keys(e).filter((k) => !['kind', 'key', 'state', 'media_type'].includes(k));
    if (unknown.length) bad(`elements[${i}] has unexpected property "${unknown[0]}"`);
    if (!isComponentKind(e.kind)) bad(`elements[${i}].kind ${JSON.stringify(e.kind)} is not a component kind`);
    if (typeof e.key !== 'string' || e.key.trim() === '') bad(`elements[${i}].key must be a non-blank string`);
    if (!isNonPresentState(e.state))
      bad(
        `elements[${i}].state must be ABSENT, UNVERSIONED or INCLUDED (a present component is a file), not ` +
          `${JSON.stringify(e.state)}`,
      );
    if (e.media_type !== undefined && (typeof e.media_type !== 'string' || e.media_type.trim() === ''))
      bad(`elements[${i}].media_type must be a non-blank string`);
    const id = `${e.kind as string}\u0000${e.key as string}`;
    if (seen.has(id)) bad(`elements[${i}] declares ${e.kind as string}/${e.key as string} a second time`);
    seen.add(id);
    return {
      kind: e.kind as string,
      key: e.key as string,
      state: e.state as NonPresentState,
      media_type: (e.media_type as string | undefined) ?? 'text/plain',
    };
  });
}
