/**
 * Canonical JSON by its definition, independent of src/: keys sorted in
 * UTF-16 code-unit order, JSON.stringify for every leaf. The fast paths of
 * src/canonical are held to it.
 */
export function canonicalOracle(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalOracle).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return (
      `{` +
      `${keys.map((k) => `${JSON.stringify(k)}:${canonicalOracle((v as Record<string, unknown>)[k])}`).join(',')}` +
      `}`
    );
  }
  return JSON.stringify(v);
}
