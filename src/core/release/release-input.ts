/** Checks of release inputs shared by name, transition and runnable: one-line flag values, --expect-registry. */
import {fail} from '../../errors.js';

const DIGEST = /^[0-9a-f]{64}$/;

/**
 * Flag values that name things (tenants, families, vocabularies): trimmed, one line, at most 200 characters, none
 * twice.
 */
export function nonBlankList(values: string[] | undefined, flag: string): string[] {
  const out = (values ?? []).map((v) => {
    if (typeof v !== 'string' || v.trim() === '' || /[\u0000-\u001f\u007f]/.test(v) || v.length > 200)
      fail(
        'USAGE',
        `${flag} takes non-blank one-line values of at most 200 characters, not ` +
          `${JSON.stringify(String(v).slice(0, 40))}`,
      );
    return v.trim();
  });
  const seen = new Set<string>();
  for (const v of out) {
    if (seen.has(v)) fail('USAGE', `${flag} names ${JSON.stringify(v)} twice`);
    seen.add(v);
  }
  return out;
}

export function parseExpect(given: string | undefined): string | null | undefined {
  if (given === undefined) return undefined;
  const v = given.trim().toLowerCase();
  if (v === 'none') return null;
  if (!DIGEST.test(v))
    fail(
      'INVALID_DIGEST',
      `--expect-registry takes the registry's full digest (64 hex characters, as release list --json shows ` +
        `it) or "none", not ${JSON.stringify(given)}`,
    );
  return v;
}

/** STALE_REGISTRY when the caller expected the registry at another digest; nothing is written. */
export function staleIfMoved(expect: string | null | undefined, digest: string | null, scope: string): void {
  if (expect !== undefined && expect !== digest)
    fail(
      'STALE_REGISTRY',
      `the registry of scope ${scope} is ${digest ?? 'not written yet (none)'}, not ${expect ?? 'none'}: ` +
        `another transition went first; nothing was written`,
      {scope, registry: digest},
    );
}
