import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {parseJson} from '../../src/canonical/index.js';

// parseJson refuses a key named twice in one object (DUPLICATE_KEY) by counting colons: the text's, its members'
// and those of its parsed strings and keys. Colons inside strings and keys, escaped or not, must never hide a
// duplicate nor invent one.
const code = (text: string): string | null => {
  try {
    parseJson(text);
    return null;
  } catch (error) {
    return (error as {code?: string}).code ?? String(error);
  }
};

describe('duplicate keys', () => {
  it('colons in strings and keys are not members', () => {
    expect(code('{"at": "2026-12-03T19:00:00Z", "a:b": {"c": ["x:y", ":", "::"]}}')).toBeNull();
    expect(code('{"at": "2026-12-03T19:00:00Z", "a\\u003ab": "\\u003a:"}')).toBeNull();
    expect(code('{"a": [{"b": 1}, {"b": 2}], "c": {"b": 3}}')).toBeNull();
  });

  it('a key named twice is refused wherever colons stand', () => {
    expect(code('{"at": "19:00", "at": "19:01"}')).toBe('DUPLICATE_KEY');
    expect(code('{"x": {"a:b": 1, "a:b": 2}, "y": "::"}')).toBe('DUPLICATE_KEY');
    expect(code('{"x": {"a\\u003ab": 1, "a:b": 2}}')).toBe('DUPLICATE_KEY');
    // One colon fewer in a string (an escape) must not make up for one member more.
    expect(code('{"s": "\\u003a", "k": 1, "k": 2}')).toBe('DUPLICATE_KEY');
  });

  it('agrees with a key-by-key reading on generated documents', () => {
    const key = fc.constantFrom('a', 'b', 'a:b', ':', 'c::');
    const leaf = fc.oneof(fc.constantFrom('x', '1:2', '::', ':'), fc.integer());
    const members = fc.array(fc.tuple(key, leaf), {maxLength: 5});
    fc.assert(
      fc.property(fc.array(members, {minLength: 1, maxLength: 3}), (objects) => {
        const object = (o: Array<[string, unknown]>) =>
          `{${o.map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`).join(', ')}}`;
        const text = `[${objects.map(object).join(', ')}]`;
        const twice = objects.some((o) => new Set(o.map(([k]) => k)).size < o.length);
        expect(code(text)).toBe(twice ? 'DUPLICATE_KEY' : null);
      }),
      {numRuns: 500},
    );
  });
});
