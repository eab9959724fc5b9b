import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {makeTree} from '../helpers/pipeline.js';
import {treeHash} from '../helpers/tree.js';

// Hex digits are case-free: a digest or a prefix given in upper (or mixed) case names the same bundle as in lower
// case, wherever a digest is read (arguments, --expect-active, --parent, tag's component digests).
describe('digests given in upper case', () => {
  it('resolve as their lower-case form in every command that reads one', () => {
    const t = makeTree();
    const c = t.propose('c', {'playbook/playbook.md': 'Be brief.\n'});
    const C = c.slice(0, 12).toUpperCase();
    const cli = (args: string[]) => runCliProcess([...args, '--knowledge', t.knowledge, '--json']);

    const show = cli(['bundle', 'show', C]);
    expect([show.status, show.stderr]).toEqual([0, '']);
    expect(show.json.bundle_digest).toBe(c);

    const diff = cli(['diff', C, t.baseline.toUpperCase()]);
    expect([diff.status, diff.stderr]).toEqual([0, '']);
    expect([diff.json.tested_bundle_digest, diff.json.comparison_bundle_digest]).toEqual([c, t.baseline]);

    const component = show.json.manifest.components.find((x: {kind: string}) => x.kind === 'playbook').digest as string;
    const tag = cli(['tag', 'add', component.toUpperCase()]);
    expect([tag.status, tag.stderr]).toEqual([0, '']);
    expect(tag.json.tag.component_digest).toBe(component);
    const untag = cli(['tag', 'rm', component.toUpperCase()]);
    expect([untag.status, untag.stderr]).toEqual([0, '']);

    const rejected = cli(['reject', C, '--rationale', 'not this one']);
    expect([rejected.status, rejected.stderr]).toEqual([0, '']);
    expect(JSON.stringify(rejected.json)).toContain(c);
  });

  it('are still refused, with one line and exit 2, when they are not hex', () => {
    const t = makeTree();
    const before = treeHash(t.knowledge);
    const r = runCliProcess(['bundle', 'show', 'ABCDEFG1', '--knowledge', t.knowledge]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^error INVALID_DIGEST: .*"ABCDEFG1"\n$/);
    expect(treeHash(t.knowledge)).toBe(before);
  });
});
