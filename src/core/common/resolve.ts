import {fail} from '../../errors.js';
import type {ScenarioStore} from '../../store/index.js';
import {listBundleDigests} from '../../store/kinds/bundle/bundle.js';
import {listCandidateDigests} from '../../store/kinds/promotion/candidate-record.js';

/** Resolve a full digest or a unique prefix of at least 8 hex characters against a scenario's bundles. */
export function resolveDigest(store: ScenarioStore, given: string): string {
  const prefix = given.trim().toLowerCase();
  if (!/^[0-9a-f]{8,64}$/.test(prefix)) {
    fail('INVALID_DIGEST', `"${given}" is not a digest: give 8 to 64 hex characters`, {digest: given});
  }
  const all = new Set([...listBundleDigests(store), ...listCandidateDigests(store)]);
  if (prefix.length === 64) {
    if (!all.has(prefix))
      fail('DIGEST_NOT_FOUND', `no bundle ${prefix} in scenario "${store.scenario}"`, {digest: prefix});
    return prefix;
  }
  const matches = [...all].filter((d) => d.startsWith(prefix)).sort();
  if (matches.length === 0)
    fail('DIGEST_NOT_FOUND', `no bundle starts with ${prefix} in scenario "${store.scenario}"`, {digest: prefix});
  if (matches.length > 1)
    fail('AMBIGUOUS_DIGEST', `${prefix} matches ${matches.length} bundles: ${matches.join(', ')}`, {
      digest: prefix,
      matches,
    });
  return matches[0]!;
}
