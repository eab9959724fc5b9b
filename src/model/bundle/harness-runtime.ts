import {fail, isJsonParseError, rethrowUnless} from '../../errors.js';
import type {ContextBundle} from './bundle.js';
import {isPythonBlank, pythonRstrip} from '../common/python-text.js';

/**
 * The runtime files of a bundle's harness validators, as the Python
 * implementation's store writes them when it saves a bundle, and as its
 * serving path loads them: context_bundles/runtime/<digest>/harness/<key>.py.
 * Each derives from the manifest alone.
 *
 * A component's source is its content when its media type is
 * text/x-python; for application/json, the "code" of the object it holds;
 * for any other media type there is none. A blank source has no file. The
 * file holds the source with trailing whitespace stripped (Python's
 * str.rstrip) and one newline.
 *
 * autoctx does not parse Python. Upstream's store refuses a source that does
 * not parse (ast.parse); autoctx writes it, and the validator fails when
 * upstream's serving path loads it.
 */
export const HARNESS_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RuntimeFile {
  key: string;
  text: string;
}

/** str() of a JSON "code" value, where autoctx can spell it exactly; undefined where it cannot. */
function pythonStr(value: unknown): string | undefined {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return undefined; // a number (1 and 1.0 read alike here, not in Python), a list or an object
}

/** The source of one harness validator (none: ''), or a problem with it. */
export function harnessSource(c: {
  key: string;
  content: string;
  media_type: string;
}): {source: string} | {problem: string} {
  if (!HARNESS_KEY.test(c.key))
    return {
      problem:
        `harness_validator key ${JSON.stringify(c.key)} is not a Python identifier ([A-Za-z_][A-Za-z0-9_]*): ` +
        `the Python implementation refuses to save it`,
    };
  if (c.media_type === 'text/x-python') return {source: c.content};
  if (c.media_type !== 'application/json') return {source: ''};
  let value: unknown;
  try {
    value = JSON.parse(c.content);
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return {problem: `harness_validator ${c.key} is application/json but its content does not parse as JSON`};
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {source: ''};
  const code = pythonStr((value as Record<string, unknown>).code);
  if (code === undefined)
    return {
      problem:
        `harness_validator ${c.key}: its "code" must be a string (autoctx cannot spell Python's str() of a ` +
        (Array.isArray((value as Record<string, unknown>).code)
          ? 'list'
          : typeof (value as Record<string, unknown>).code) +
        `)`,
    };
  return {source: code};
}

/** The runtime files of a bundle, in manifest order, or the problem of the first component upstream would not save. */
export function harnessRuntime(bundle: {
  components: ReadonlyArray<Pick<ContextBundle['components'][number], 'kind' | 'key' | 'content' | 'media_type'>>;
}): {files: RuntimeFile[]} | {problem: string; key: string} {
  const files: RuntimeFile[] = [];
  for (const c of bundle.components) {
    if (c.kind !== 'harness_validator' || (c as {state?: unknown}).state !== undefined) continue;
    const s = harnessSource(c);
    if ('problem' in s) return {problem: s.problem, key: c.key};
    if (!isPythonBlank(s.source)) files.push({key: c.key, text: `${pythonRstrip(s.source)}\n`});
  }
  return {files};
}

/** harnessRuntime, refusing a problem with INVALID_INPUT naming the component. */
export function harnessRuntimeFiles(bundle: Parameters<typeof harnessRuntime>[0]): RuntimeFile[] {
  const r = harnessRuntime(bundle);
  if ('problem' in r) fail('INVALID_INPUT', r.problem, {component: `harness_validator/${r.key}`});
  return r.files;
}
