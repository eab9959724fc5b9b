import fs from 'node:fs';
import path from 'node:path';
import {canonicalJson, decodeUtf8, parseJson, parseJsonUtf8, withOrigin} from '../../canonical/index.js';
import {fail, isSystemError, rethrowUnless} from '../../errors.js';
import {type ComponentInput} from '../../model/bundle/component.js';
import {isComponentKind, mediaTypeForExtension} from '../../model/bundle/kinds.js';
import {decodeKey, extensionForMediaType} from '../file-names.js';
import {readInputFile, readStdinLimited} from './input-files.js';
import {ELEMENT_STATES_FILE, readElementStates} from '../kinds/bundle/element-states.js';

/** Bundle material read from SRC: components and, for a manifest-shaped JSON, its header. */
export interface BundleSource {
  origin: string;
  components: Array<ComponentInput & {digest?: string}>;
  header?: {scenario: string; evaluator_epoch: string; parent_digest: string | null; digest?: string};
}

function lstatOrFail(src: string): fs.Stats {
  try {
    return fs.lstatSync(src);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    fail('INPUT_NOT_FOUND', `source not found: ${src}`, {file: src});
  }
}

/** A source file's bytes: a regular file, never read through a link, within the input limit. */
function readFileBytes(file: string): Buffer {
  return readInputFile(file, false);
}

function readStdin(): Buffer {
  return readStdinLimited();
}

/** A source folder, never a link to one. */
function sourceDir(dir: string, st: fs.Stats): void {
  if (st.isSymbolicLink())
    fail('INPUT_UNSAFE', `${dir} is a symbolic link: a source is never read through a link`, {file: dir});
}

/** Read SRC: a component folder, a manifest-shaped JSON file, or "-" for that JSON on stdin. */
export function readSource(src: string): BundleSource {
  if (src === '-') return fromManifestJson(readStdin(), 'stdin');
  const st = lstatOrFail(src);
  sourceDir(src, st);
  if (st.isDirectory()) return fromDirectory(src);
  return fromManifestJson(readFileBytes(src), src);
}

function isHidden(name: string): boolean {
  return name.startsWith('.');
}

/** Entries of the manifest.json that `bundle materialize` writes beside the component folders. */
function sidecar(dir: string): Map<string, {media_type: string; content: string}> {
  const map = new Map<string, {media_type: string; content: string}>();
  const file = path.join(dir, 'manifest.json');
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return map;
  }
  if (!st.isFile())
    fail(
      'INPUT_UNSAFE',
      `${file} is not a regular file (a link, FIFO or device): a source is read from regular files only`,
      {file},
    );
  const value = withOrigin(file, () => parseJsonUtf8(readFileBytes(file)));
  const components = (value as {components?: unknown}).components;
  if (!Array.isArray(components)) return map;
  for (const c of components as Array<Record<string, unknown>>) {
    if (
      typeof c?.kind === 'string' &&
      typeof c.key === 'string' &&
      typeof c.media_type === 'string' &&
      typeof c.content === 'string'
    ) {
      map.set(`${c.kind}\u0000${c.key}`, {media_type: c.media_type, content: c.content});
    }
  }
  return map;
}

function fromDirectory(dir: string): BundleSource {
  const hints = sidecar(dir);
  const components: ComponentInput[] = [];
  const seen = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (isHidden(entry.name)) continue;
    const kindDir = path.join(dir, entry.name);
    if (entry.isSymbolicLink())
      fail('INPUT_UNSAFE', `${kindDir} is a symbolic link: a source is never read through a link`, {file: kindDir});
    if (!entry.isDirectory()) continue; // manifest.json, README and other loose files
    if (!isComponentKind(entry.name))
      fail('UNKNOWN_KIND', `${kindDir}: "${entry.name}" is not a component kind`, {file: kindDir});
    for (const f of fs.readdirSync(kindDir, {withFileTypes: true}).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (isHidden(f.name)) continue;
      const file = path.join(kindDir, f.name);
      if (f.isSymbolicLink())
        fail('INPUT_UNSAFE', `${file} is a symbolic link: a source is never read through a link`, {file});
      if (!f.isFile())
        fail(f.isDirectory() ? 'INVALID_INPUT' : 'INPUT_UNSAFE', `${file}: component folders hold regular files only`, {
          file,
        });
      const ext = path.extname(f.name);
      const key = decodeKey(ext ? f.name.slice(0, -ext.length) : f.name);
      const id = `${entry.name}\u0000${key}`;
      const other = seen.get(id);
      if (other) fail('DUPLICATE_COMPONENT', `${file} and ${other} are both component ${entry.name}/${key}`, {file});
      seen.set(id, file);
      const text = withOrigin(file, () => decodeUtf8(readFileBytes(file)));
      const hint = hints.get(id);
      let mediaType = mediaTypeForExtension(ext);
      if (hint && extensionForMediaType(hint.media_type) === (ext.toLowerCase() || '.txt')) mediaType = hint.media_type;
      let content = text;
      if (mediaType === 'application/json' && !(hint && hint.content === text)) {
        content = withOrigin(file, () => canonicalJson(parseJson(text)));
      }
      components.push({kind: entry.name, key, content, media_type: mediaType});
    }
  }
  for (const e of readElementStates(dir)) {
    const id = `${e.kind}\u0000${e.key}`;
    const file = seen.get(id);
    if (file)
      fail(
        'DUPLICATE_COMPONENT',
        `${path.join(dir, ELEMENT_STATES_FILE)} declares ${e.kind}/${e.key} ${e.state}, but ${file} is ` +
          `that component's file (a non-present component has none)`,
        {file},
      );
    seen.set(id, ELEMENT_STATES_FILE);
    components.push({kind: e.kind, key: e.key, content: '', media_type: e.media_type, state: e.state});
  }
  if (components.length === 0)
    fail('INVALID_INPUT', `${dir} holds no component folders (<kind>/<key>.<ext>)`, {file: dir});
  return {origin: dir, components};
}

function fromManifestJson(bytes: Buffer, origin: string): BundleSource {
  const value = withOrigin(origin, () => parseJsonUtf8(bytes));
  const bad = (msg: string): never => fail('SCHEMA_VIOLATION', `${origin}: ${msg}`, {file: origin});
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    bad('expected a manifest-shaped JSON object');
  const m = value as Record<string, unknown>;
  const allowed = new Set(['schema_version', 'scenario', 'evaluator_epoch', 'parent_digest', 'components', 'digest']);
  const extra = Object.keys(m).filter((k) => !allowed.has(k));
  if (extra.length) bad(`unexpected property "${extra[0]}"`);
  if (m.schema_version !== undefined && m.schema_version !== 1) bad('schema_version must be 1');
  if (typeof m.scenario !== 'string') bad('"scenario" must be a string');
  if (typeof m.evaluator_epoch !== 'string') bad('"evaluator_epoch" must be a string');
  if (m.parent_digest !== null && typeof m.parent_digest !== 'string') bad('"parent_digest" must be a digest or null');
  if (m.digest !== undefined && typeof m.digest !== 'string') bad('"digest" must be a string');
  if (!Array.isArray(m.components)) bad('"components" must be an array');
  const components = (m.components as unknown[]).map((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) bad(`components[${i}] must be an object`);
    const c = raw as Record<string, unknown>;
    const extraC = Object.keys(c).filter(
      (k) => !['kind', 'key', 'content', 'media_type', 'digest', 'state'].includes(k),
    );
    if (extraC.length) bad(`components[${i}] has unexpected property "${extraC[0]}"`);
    for (const k of ['kind', 'key', 'content'] as const)
      if (typeof c[k] !== 'string') bad(`components[${i}].${k} must be a string`);
    if (c.media_type !== undefined && typeof c.media_type !== 'string')
      bad(`components[${i}].media_type must be a string`);
    if (c.digest !== undefined && typeof c.digest !== 'string') bad(`components[${i}].digest must be a string`);
    if (c.state !== undefined && typeof c.state !== 'string') bad(`components[${i}].state must be a string`);
    return {
      kind: c.kind as string,
      key: c.key as string,
      content: c.content as string,
      media_type: (c.media_type as string | undefined) ?? 'text/plain',
      ...(c.digest !== undefined ? {digest: c.digest as string} : {}),
      ...(c.state !== undefined ? {state: c.state as string} : {}),
    };
  });
  return {
    origin,
    components,
    header: {
      scenario: m.scenario as string,
      evaluator_epoch: m.evaluator_epoch as string,
      parent_digest: m.parent_digest as string | null,
      ...(m.digest !== undefined ? {digest: m.digest as string} : {}),
    },
  };
}
