import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {makeTree} from '../helpers/pipeline.js';

// status shows one row per candidate under a header row, with the proposer's rationale (not the latest change's);
// on a terminal every row fits its width; piped, and in --json, the text is whole.
const WHY = 'a much shorter playbook that should keep reviewers focused on the real problems in each diff';

describe('autoctx status', () => {
  it("has a header row and keeps the proposer's rationale after a later change", () => {
    const t = makeTree();
    const src = path.join(t.dir, 'why');
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), 'Be brief.\n');
    const p = runCliProcess(['propose', '--from', src, '--rationale', WHY, '--knowledge', t.knowledge, '--json']);
    expect(p.status).toBe(0);
    const c = p.json.bundle_digest as string;
    expect(runCliProcess(['reject', c, '--rationale', 'not now', '--knowledge', t.knowledge]).status).toBe(0);

    const r = runCliProcess(['status', '--knowledge', t.knowledge]);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n');
    const head = lines.findIndex((l) => /^\s+CANDIDATE\s+LIFECYCLE\s+DECISION\s/.test(l));
    expect(head).toBeGreaterThan(0);
    const row = lines.find((l) => l.includes(c.slice(0, 12)))!;
    expect(lines.indexOf(row)).toBeGreaterThan(head);
    expect(row).toContain(WHY);
    expect(row).not.toContain('not now');
    // Each column starts where its head does: a lifecycle and a decision never run together unlabelled.
    const at = (name: string) => lines[head]!.indexOf(name);
    expect(row.slice(at('LIFECYCLE')).startsWith('rejected ')).toBe(true);
    expect(row.slice(at('DECISION')).startsWith('not evaluated ')).toBe(true);

    const json = runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json;
    const detail = json.scenarios[0].details.find((x: {bundle_digest: string}) => x.bundle_digest === c);
    expect([detail.proposal_rationale, detail.rationale]).toEqual([WHY, 'rejected by hand: not now']);
  });

  it("cuts each row to the terminal's width with an ellipsis on a terminal, and never when piped", () => {
    const t = makeTree();
    const src = path.join(t.dir, 'why');
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), 'Be brief.\n');
    expect(runCliProcess(['propose', '--from', src, '--rationale', WHY, '--knowledge', t.knowledge]).status).toBe(0);
    const out = path.join(t.dir, 'tty.txt');
    const bin = path.join(PROJECT_ROOT, 'bin/run.js');
    const r = spawnSync('script', ['-qfec', `stty cols 80; node ${bin} status --knowledge ${t.knowledge}`, out], {
      encoding: 'utf8',
      env: {...process.env, NODE_OPTIONS: '', NO_COLOR: '1', CI: '', TERM: 'xterm-256color'},
    });
    expect(r.status).toBe(0);
    const screen = fs
      .readFileSync(out, 'utf8')
      .split(/\r?\n/)
      .filter((l) => !l.startsWith('Script '));
    const rows = screen.filter((l) => l.startsWith('  '));
    expect(rows.length).toBeGreaterThanOrEqual(3);
    for (const l of screen) expect([l, [...l].length <= 80]).toEqual([l, true]);
    expect(rows.some((l) => l.endsWith('…'))).toBe(true);

    const piped = runCliProcess(['status', '--knowledge', t.knowledge]);
    expect(piped.stdout).toContain(WHY);
  });
});
