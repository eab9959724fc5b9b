import {compareUtf16} from './json.js';

/**
 * The on-disk spelling autoctx writes: keys sorted by UTF-16 code units (also
 * integer-like keys, which JSON.stringify would move first), two-space indent,
 * UTF-8, final newline. Deterministic, so writing the same document twice
 * yields the same bytes and git diffs stay small. Callers pass values that
 * already went through canonical validation.
 */
export function prettyJson(value: unknown): string {
  const out: string[] = [];
  write(value, '', out);
  out.push('\n');
  return out.join('');
}

function write(value: unknown, indent: string, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    out.push(JSON.stringify(value));
    return;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) {
      out.push('[]');
      return;
    }
    out.push('[');
    value.forEach((item, i) => {
      out.push(i === 0 ? '\n' : ',\n', inner);
      write(item, inner, out);
    });
    out.push('\n', indent, ']');
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).filter((k) => record[k] !== undefined).sort(compareUtf16);
  if (keys.length === 0) {
    out.push('{}');
    return;
  }
  out.push('{');
  keys.forEach((key, i) => {
    out.push(i === 0 ? '\n' : ',\n', inner, JSON.stringify(key), ': ');
    write(record[key], inner, out);
  });
  out.push('\n', indent, '}');
}
