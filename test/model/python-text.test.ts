import {describe, expect, it} from '@jest/globals';
import {isPythonBlank, pythonRstrip} from '../../src/model/common/python-text.js';
import {harnessRuntimeFiles} from '../../src/model/bundle/harness-runtime.js';

// [text, Python's text.rstrip(), text.strip() == ""], printed by python3 3.11.
const CASES: Array<[string, string, boolean]> = JSON.parse(
  '[["a \\t\\n", "a", false], ["a\\u001c\\u001d\\u001e\\u001f", "a", false], ' +
    '["a\\ufeff", "a\\ufeff", false], ["a\\u0085", "a", false], ["a\\u3000\\u2028 ", "a", ' +
    'false], ["\\u200b x\\u200b", "\\u200b x\\u200b", false], ["x\\u180e", "x\\u180e", ' +
    'false], ["  \\n", "", true], ["", "", true], ["a\\u0000", "a\\u0000", false]]',
);

describe("Python's whitespace", () => {
  it.each(CASES)('%j.rstrip() is %j', (text, stripped, blank) => {
    expect(pythonRstrip(text)).toBe(stripped);
    expect(isPythonBlank(text)).toBe(blank);
  });

  it(
    'differs from trimEnd where Python and JavaScript disagree ' + "(so a mirror or a validator gets upstream's bytes)",
    () => {
      expect(['a\ufeff'.trimEnd(), pythonRstrip('a\ufeff')]).toEqual(['a', 'a\ufeff']);
      expect(['a\u001f'.trimEnd(), pythonRstrip('a\u001f')]).toEqual(['a\u001f', 'a']);
    },
  );
});

describe('harness runtime files', () => {
  const hv = (key: string, content: string, media_type: string) => ({
    kind: 'harness_validator' as const,
    key,
    content,
    media_type,
  });
  it('take the source of each shape the Python store handles, in manifest order', () => {
    const files = harnessRuntimeFiles({
      components: [
        hv('a', 'x = 1\n\n  \u001c', 'text/x-python'),
        hv('b', '{"code":"y = 2  "}', 'application/json'),
        hv('c', '{"code":null}', 'application/json'),
        hv('d', '{"code":false}', 'application/json'),
        hv('e', '{"other":1}', 'application/json'),
        hv('f', '["code"]', 'application/json'),
        hv('g', ' \n', 'text/x-python'),
        hv('h', 'text', 'text/markdown'),
      ],
    });
    expect(files).toEqual([
      {key: 'a', text: 'x = 1\n'},
      {key: 'b', text: 'y = 2\n'},
      {key: 'c', text: 'None\n'},
      {key: 'd', text: 'False\n'},
    ]);
  });

  it.each([
    [hv('1st', 'x', 'text/x-python'), /not a Python identifier/],
    [hv('a.b', 'x', 'text/x-python'), /not a Python identifier/],
    [hv('ok', '{not json', 'application/json'), /does not parse as JSON/],
    [hv('ok', '{"code": 1.5}', 'application/json'), /"code" must be a string .*number/],
    [hv('ok', '{"code": [1]}', 'application/json'), /"code" must be a string .*list/],
  ])('refuse %j (INVALID_INPUT)', (component, message) => {
    expect(() => harnessRuntimeFiles({components: [component]})).toThrow(
      expect.objectContaining({code: 'INVALID_INPUT', message: expect.stringMatching(message)}),
    );
  });
});
