import {createHash, hash} from 'node:crypto';
import {LARGE_DOCUMENT, LARGE_STRING, rawLiteralsOf} from '../canonical/index.js';
import {BUNDLE_SCHEMA_VERSION, compareComponents, DIGEST_PATTERN, type BundleOutline} from './bundle.js';
import {isComponentKind} from './kinds.js';

/**
 * verify's fast path over a stored manifest (issue 20): the outline of a
 * manifest whose every check passes, taken from its bytes with each
 * component's text hashed straight from the file, never decoded nor escaped
 * again. It accepts exactly what validateBundle accepts and nothing more;
 * whenever anything is unusual (a text beyond ASCII, a digest that does not
 * match, a shape validateBundle would refuse) it returns null, and the
 * caller reads the manifest the general way, which names the problem.
 */
const MANIFEST_KEYS = ['components', 'digest', 'evaluator_epoch', 'parent_digest', 'scenario', 'schema_version'];
const COMPONENT_KEYS = ['content', 'digest', 'key', 'kind', 'media_type'];

function hasExactly(value: object, keys: readonly string[]): boolean {
  const actual = Object.keys(value);
  return actual.length === keys.length && keys.every((k) => Object.hasOwn(value, k));
}

const MANIFEST_OPEN = Buffer.from('{"components":[');
const CONTENT_OPEN = Buffer.from('{"content":');
const NEXT_CONTENT_OPEN = Buffer.from(',{"content":');

const plain = (v: unknown): v is string => typeof v === 'string' && v.length <= LARGE_STRING && v.isWellFormed();
const nonBlank = (v: unknown): v is string => plain(v) && v.trim().length > 0;

export function outlineFromBytes(bytes: Uint8Array, expected: string): BundleOutline | null {
  // A large document is the general reader's, which never holds a second copy of its long texts.
  if (bytes.length >= LARGE_DOCUMENT) return null;
  const raw = rawLiteralsOf(bytes, 'content');
  if (raw === null) return null;
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(raw.skeleton) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m) || !hasExactly(m, MANIFEST_KEYS)) return null;
  if (m.schema_version !== BUNDLE_SCHEMA_VERSION || !nonBlank(m.scenario) || !nonBlank(m.evaluator_epoch)) return null;
  if (m.parent_digest !== null && (typeof m.parent_digest !== 'string' || !DIGEST_PATTERN.test(m.parent_digest))) return null;
  if (m.digest !== expected || !Array.isArray(m.components) || m.components.length !== raw.literals.length) return null;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const components: BundleOutline['components'] = [];
  // The manifest's canonical text in pieces: the component texts as they lie in the file, the rest beside them.
  const manifest = createHash('sha256').update(MANIFEST_OPEN);
  for (let i = 0; i < m.components.length; i++) {
    const c = m.components[i] as Record<string, unknown>;
    if (c === null || typeof c !== 'object' || Array.isArray(c) || !hasExactly(c, COMPONENT_KEYS)) return null;
    if (c.content !== '' || !isComponentKind(c.kind) || !nonBlank(c.key) || !nonBlank(c.media_type) || typeof c.digest !== 'string') return null;
    const [start, end] = raw.literals[i]!;
    const text = buf.subarray(start, end);
    const tail = `,"key":${JSON.stringify(c.key)},"kind":${JSON.stringify(c.kind)},"media_type":${JSON.stringify(c.media_type)}}`;
    const tailBytes = Buffer.from(tail, 'utf8');
    const digest = hash('sha256', Buffer.concat([CONTENT_OPEN, text, tailBytes]), 'hex');
    if (digest !== c.digest) return null; // (a digest computed here is 64 lowercase hex: equality checks its spelling too)
    const outline = {kind: c.kind, key: c.key, media_type: c.media_type, digest};
    if (i > 0 && compareComponents(components[i - 1]!, outline) >= 0) return null; // unsorted or a duplicate
    components.push(outline);
    manifest.update(i === 0 ? CONTENT_OPEN : NEXT_CONTENT_OPEN).update(text).update(Buffer.from(`,"digest":"${digest}"`, 'latin1')).update(tailBytes);
  }
  const parent = m.parent_digest === null ? 'null' : JSON.stringify(m.parent_digest);
  manifest.update(Buffer.from(`],"evaluator_epoch":${JSON.stringify(m.evaluator_epoch)},"parent_digest":${parent},"scenario":${JSON.stringify(m.scenario)},"schema_version":${BUNDLE_SCHEMA_VERSION}}`, 'utf8'));
  if (manifest.digest('hex') !== expected) return null;
  return {schema_version: BUNDLE_SCHEMA_VERSION, scenario: m.scenario, evaluator_epoch: m.evaluator_epoch, parent_digest: m.parent_digest as string | null, components, digest: expected};
}
