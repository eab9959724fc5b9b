import {compareUtf16, LARGE_STRING, textPieces} from './json.js';

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

/**
 * The same text as prettyJson, in pieces of about 64 KiB, so that a document
 * with a very long string is written without holding its whole text (or an
 * escaped copy of the long string) in memory.
 */
export function* prettyJsonPieces(value: unknown): Generator<string> {
  let buffered = '';
  for (const piece of pieces(value, '')) {
    buffered += piece;
    if (buffered.length >= 1 << 14) {
      yield buffered;
      buffered = '';
    }
  }
  yield `${buffered}\n`;
}

function* pieces(value: unknown, indent: string): Generator<string> {
  if (typeof value === 'string' && value.length > LARGE_STRING) {
    yield '"';
    for (const piece of textPieces(value)) yield JSON.stringify(piece).slice(1, -1);
    yield '"';
    return;
  }
  if (value === null || typeof value !== 'object') {
    yield JSON.stringify(value);
    return;
  }
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return yield '[]';
    yield '[';
    for (let i = 0; i < value.length; i++) {
      yield `${i === 0 ? '\n' : ',\n'}${inner}`;
      yield* pieces(value[i], inner);
    }
    yield `\n${indent}]`;
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort(compareUtf16);
  if (keys.length === 0) return yield '{}';
  yield '{';
  for (let i = 0; i < keys.length; i++) {
    yield `${i === 0 ? '\n' : ',\n'}${inner}${JSON.stringify(keys[i])}: `;
    yield* pieces(record[keys[i]!], inner);
  }
  yield `\n${indent}}`;
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
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort(compareUtf16);
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
