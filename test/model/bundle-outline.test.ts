import {describe, expect, it} from '@jest/globals';
import fc from 'fast-check';
import {createHash} from 'node:crypto';
import {canonicalJson, parseJsonUtf8, prettyJson} from '../../src/canonical/index.js';
import {createBundle, validateBundle, type ContextBundle} from '../../src/model/bundle/bundle.js';
import {outlineFromBytes} from '../../src/model/bundle/bundle-outline.js';

// Verify hashes a manifest's texts straight from its bytes. That fast path must accept
// exactly what the general reader (parse, then validateBundle) accepts, with the same outline,
// and hand everything else back (null) to the general reader, which names the problem.

const outlineOf = (b: ContextBundle) => ({
  ...b,
  components: b.components.map(({kind, key, media_type, digest}) => ({kind, key, media_type, digest})),
});

function general(bytes: Uint8Array, digest: string): ReturnType<typeof outlineOf> | 'refused' {
  try {
    const b = validateBundle(parseJsonUtf8(bytes));
    return b.digest === digest ? outlineOf(b) : 'refused';
  } catch {
    return 'refused';
  }
}

const text = fc.oneof(
  fc.string({unit: 'grapheme-ascii', maxLength: 60}),
  fc.string({unit: 'binary', maxLength: 20}).filter((s) => s.isWellFormed()),
  fc.constantFrom(
    'line\nnext\t"quoted" \\ back',
    '\u0000\u0001\u0008\u000b\u001f\u007f',
    'caf\u00e9 \u{1F600}',
    '/slash/',
    'plain text',
  ),
);
const component = fc.record({
  kind: fc.constantFrom('playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'routing_config'),
  key: fc.oneof(
    fc.constantFrom('a', 'b', 'key one', 'caf\u00e9'),
    fc.string({unit: 'grapheme-ascii', minLength: 1, maxLength: 8}).filter((s) => s.trim() !== ''),
  ),
  content: text,
  media_type: fc.constantFrom('text/markdown', 'application/json'),
});
const bundle = fc
  .uniqueArray(component, {selector: (c) => `${c.kind}\u0000${c.key}`, maxLength: 6})
  .map((components) => createBundle({scenario: 'demo', evaluator_epoch: 'e1', parent_digest: null, components}));

describe('the manifest fast path', () => {
  it(
    'gives the outline of the general reader for manifests as ' +
      'autoctx writes them, as compact JSON, and with keys out of order',
    () => {
      fc.assert(
        fc.property(bundle, (b) => {
          const pretty = prettyJson(b);
          const sortedCompact = JSON.stringify(JSON.parse(pretty));
          for (const spelling of [pretty, sortedCompact, JSON.stringify(b)]) {
            const bytes = Buffer.from(spelling, 'utf8');
            const fast = outlineFromBytes(bytes, b.digest);
            if (fast !== null) expect(fast).toEqual(general(bytes, b.digest));
            // Text within printable ASCII, its keys in sorted order (as autoctx and the Python implementation write
            // them), is always taken on the fast path.
            if (spelling !== JSON.stringify(b) || spelling === sortedCompact) {
              if (
                b.components.every((c) => /^[\x20-\x7e\n\t"\\]*$/.test(c.content)) &&
                /^[\x20-\x7e]*$/.test(spelling.replace(/\n/g, ''))
              )
                expect(fast).not.toBeNull();
            }
          }
        }),
        {numRuns: 400, seed: 2028},
      );
    },
  );

  it('never accepts a damaged manifest the general reader refuses (random byte edits)', () => {
    const alphabet = Buffer.from('{}[]",:\\u0abfnrt "xyz\u0001\u00ff');
    fc.assert(
      fc.property(bundle, fc.array(fc.tuple(fc.nat(), fc.nat()), {minLength: 1, maxLength: 4}), (b, edits) => {
        const bytes = Buffer.from(prettyJson(b), 'utf8');
        for (const [at, ch] of edits) bytes[at % bytes.length] = alphabet[ch % alphabet.length]!;
        const fast = outlineFromBytes(bytes, b.digest);
        if (fast !== null) expect(fast).toEqual(general(bytes, b.digest));
      }),
      {numRuns: 1500, seed: 2029},
    );
  });

  it('hands back duplicated keys, extra keys and a text moved between components', () => {
    const b = createBundle({
      scenario: 'demo',
      evaluator_epoch: 'e1',
      parent_digest: null,
      components: [
        {kind: 'hints', key: 'a', content: 'one'},
        {kind: 'playbook', key: 'b', content: 'two'},
      ],
    });
    const pretty = prettyJson(b);
    const cases = [
      pretty.replace('"content": "one",', '"content": "one", "content": "one",'),
      pretty.replace('"content": "two",', '"content": "two", "extra": "x",'),
      pretty.replace('"one"', '"tmp"').replace('"two"', '"one"').replace('"tmp"', '"two"'),
      pretty.replace('"schema_version": 1', '"schema_version": 1.5'),
    ];
    for (const c of cases) {
      const bytes = Buffer.from(c, 'utf8');
      expect([c, outlineFromBytes(bytes, b.digest)]).toEqual([c, null]);
      // A key given twice, even with the same text, cannot be canonical: the general reader refuses it too.
      expect(general(bytes, b.digest)).toEqual('refused');
    }
    expect(outlineFromBytes(Buffer.from(pretty, 'utf8'), b.digest)).toEqual(outlineOf(b));
  });

  // A file whose digests were computed over a spelling that is not canonical JSON of its values (a raw
  // control character, a raw newline in a text, an escape JSON.stringify does not write) is consistent
  // with itself byte for byte. The general reader refuses it; so must the fast path.
  it('refuses a manifest hashed over a spelling that is not canonical, however consistent its digests', () => {
    const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
    const cases: Array<[string, string]> = [
      ['a raw control character', '\u0001'],
      ['a raw tab', '\t'],
      ['a raw newline', '\n'],
      ['an escaped slash', '\\/'],
      ['an uppercase \\u escape', '\\u001F'],
      ['a \\u escape of a printable character', '\\u0041'],
    ];
    for (const [what, spelling] of cases) {
      const MARK = 'MARK';
      const comp = {content: `a${MARK}b`, key: 'k', kind: 'hints', media_type: 'text/markdown'};
      const respell = (s: string) => s.replaceAll(MARK, spelling);
      const componentDigest = sha(respell(canonicalJson(comp)));
      const body = {
        components: [{...comp, digest: componentDigest}],
        evaluator_epoch: 'e1',
        parent_digest: null,
        scenario: 'demo',
        schema_version: 1,
      };
      const digest = sha(respell(canonicalJson(body)));
      const bytes = Buffer.from(respell(prettyJson({...body, digest})), 'utf8');
      expect([what, outlineFromBytes(bytes, digest)]).toEqual([what, null]);
      expect([what, general(bytes, digest)]).toEqual([what, 'refused']);
    }
  });

  it('takes the characters JSON.stringify writes raw (DEL, text beyond ASCII) on the fast path', () => {
    const b = createBundle({
      scenario: 'demo',
      evaluator_epoch: 'e1',
      parent_digest: null,
      components: [{kind: 'hints', key: 'caf\u00e9', content: 'del \u007f, caf\u00e9, \u{1F600}, \u2028'}],
    });
    const bytes = Buffer.from(prettyJson(b), 'utf8');
    expect(outlineFromBytes(bytes, b.digest)).toEqual(outlineOf(b));
  });
});
