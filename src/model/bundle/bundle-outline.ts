import {hash} from 'node:crypto';
import {LARGE_DOCUMENT, LARGE_STRING, rawLiteralsOf} from '../../canonical/index.js';
import {BUNDLE_SCHEMA_VERSION, compareComponents, DIGEST_PATTERN, type BundleOutline} from './bundle.js';
import {isComponentKind} from './kinds.js';
import {isJsonParseError, rethrowUnless} from '../../errors.js';

/**
 * verify's fast path over a stored manifest: the outline of a
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

const MANIFEST_OPEN = '{"components":[';
const CONTENT_OPEN = Buffer.from('{"content":');
const NEXT_CONTENT_OPEN = Buffer.from(',{"content":');
const DIGEST_OPEN = Buffer.from(',"digest":"');
/** ,"digest":"<64 hex>" */
const DIGEST_PIECE = DIGEST_OPEN.length + 65;

/**
 * The manifest's canonical text is put together here, component by
 * component, and hashed once at the end; each component's own canonical text
 * is hashed in place on the way (its text, then its tail where the
 * manifest's ',"digest":…' goes next). Reused from manifest to manifest.
 */
let scratch = Buffer.allocUnsafe(1 << 20);

/** Room for `more` bytes after `at`, keeping what is written. */
function room(at: number, more: number): void {
  if (at + more <= scratch.length) return;
  const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, at + more));
  scratch.copy(grown, 0, 0, at);
  scratch = grown;
}

function putBytes(at: number, bytes: Uint8Array): number {
  room(at, bytes.length);
  scratch.set(bytes, at);
  return at + bytes.length;
}

function put(at: number, text: string): number {
  room(at, 3 * text.length);
  return at + scratch.write(text, at, 'utf8');
}

/**
 * A component's canonical text after its content, `,"key":…,"kind":…,"media_type":…}`,
 * as bytes, kept by key: the bundles of one scenario repeat the same keys.
 */
const tails = new Map<string, {kind: string; media_type: string; bytes: Buffer}>();
function tailOf(key: string, kind: string, media_type: string): Buffer {
  const known = tails.get(key);
  if (known !== undefined && known.kind === kind && known.media_type === media_type) return known.bytes;
  if (tails.size >= 4096) tails.clear();
  const bytes = Buffer.from(
    `,"key":${JSON.stringify(key)},"kind":"${kind}","media_type":${JSON.stringify(media_type)}}`,
    'utf8',
  );
  tails.set(key, {kind, media_type, bytes});
  return bytes;
}

function colons(v: unknown): number {
  if (typeof v !== 'string') return 0;
  let n = 0;
  for (let at = v.indexOf(':'); at >= 0; at = v.indexOf(':', at + 1)) n++;
  return n;
}

/**
 * Whether the skeleton's text names each member of the manifest once: outside strings a colon ends each key, so its
 * colons less those of its strings are the members written, which must be the six of the manifest and five of each
 * component that the parsed value has (a duplicate key, which JSON.parse takes silently, makes one more). A colon
 * spelled \u003a is left to the general reader.
 */
function oneMemberPerKey(skeleton: string, m: Record<string, unknown>, components: unknown[]): boolean {
  const members = MANIFEST_KEYS.length + COMPONENT_KEYS.length * components.length;
  const written = colons(skeleton);
  if (written === members) return true; // no colon in a string, and each member once
  if (skeleton.includes('\\u003a') || skeleton.includes('\\u003A')) return false;
  let inStrings = colons(m.scenario) + colons(m.evaluator_epoch) + colons(m.parent_digest) + colons(m.digest);
  for (const c of components)
    if (c !== null && typeof c === 'object')
      for (const k of COMPONENT_KEYS) inStrings += colons((c as Record<string, unknown>)[k]);
  return written - inStrings === members;
}

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
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return null;
  }
  if (m === null || typeof m !== 'object' || Array.isArray(m) || !hasExactly(m, MANIFEST_KEYS)) return null;
  if (m.schema_version !== BUNDLE_SCHEMA_VERSION || !nonBlank(m.scenario) || !nonBlank(m.evaluator_epoch)) return null;
  if (m.parent_digest !== null && (typeof m.parent_digest !== 'string' || !DIGEST_PATTERN.test(m.parent_digest)))
    return null;
  if (m.digest !== expected || !Array.isArray(m.components) || m.components.length !== raw.literals.length) return null;
  if (!oneMemberPerKey(raw.skeleton, m, m.components)) return null; // a key named twice: JSON.parse kept the last
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const components: BundleOutline['components'] = [];
  let at = put(0, MANIFEST_OPEN);
  for (let i = 0; i < m.components.length; i++) {
    const c = m.components[i] as Record<string, unknown>;
    if (c === null || typeof c !== 'object' || Array.isArray(c) || !hasExactly(c, COMPONENT_KEYS)) return null;
    if (
      c.content !== '' ||
      !isComponentKind(c.kind) ||
      !nonBlank(c.key) ||
      !nonBlank(c.media_type) ||
      typeof c.digest !== 'string'
    )
      return null;
    const [start, end] = raw.literals[i]!;
    const from = i === 0 ? at : at + 1;
    at = putBytes(at, i === 0 ? CONTENT_OPEN : NEXT_CONTENT_OPEN);
    room(at, end - start);
    at += buf.copy(scratch, at, start, end);
    const tailEnd = putBytes(at, tailOf(c.key, c.kind, c.media_type));
    const digest = hash('sha256', scratch.subarray(from, tailEnd), 'hex');
    // (a digest computed here is 64 lowercase hex: equality checks its spelling too)
    if (digest !== c.digest) return null;
    const outline = {kind: c.kind, key: c.key, media_type: c.media_type, digest};
    if (i > 0 && compareComponents(components[i - 1]!, outline) >= 0) return null; // unsorted or a duplicate
    components.push(outline);
    // The manifest's spelling of the component: ,"digest":"…" between the text and the tail.
    room(tailEnd, DIGEST_PIECE);
    scratch.copyWithin(at + DIGEST_PIECE, at, tailEnd);
    scratch.set(DIGEST_OPEN, at);
    scratch.write(digest, at + DIGEST_OPEN.length, 'latin1');
    scratch[at + DIGEST_PIECE - 1] = 0x22;
    at = tailEnd + DIGEST_PIECE;
  }
  const parent = m.parent_digest === null ? 'null' : JSON.stringify(m.parent_digest);
  at = put(
    at,
    `],"evaluator_epoch":${JSON.stringify(m.evaluator_epoch)},"parent_digest":${parent},"scenario":` +
      `${JSON.stringify(m.scenario)},"schema_version":${BUNDLE_SCHEMA_VERSION}}`,
  );
  if (hash('sha256', scratch.subarray(0, at), 'hex') !== expected) return null;
  return {
    schema_version: BUNDLE_SCHEMA_VERSION,
    scenario: m.scenario,
    evaluator_epoch: m.evaluator_epoch,
    parent_digest: m.parent_digest as string | null,
    components,
    digest: expected,
  };
}
