import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {hostReport} from '../../src/core/evaluation/agent/hosts.js';
import {scoreLine} from '../../src/core/evaluation/agent/checker.js';
import {HeadTail} from '../../src/core/evaluation/agent/bounded-process.js';
import {agentTaskOf, boundedText, workspaceDiff} from '../../src/model/evaluation/agent/task.js';
import {digestOfTexts, treeDigest} from '../../src/store/io/agent-files.js';
import {tempDir} from '../helpers/tree.js';

/** The agent evaluator's parts, in process: what its answers are made of. */
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const lines = (...events: unknown[]) => events.map((e) => JSON.stringify(e)).join('\n');

describe('the tree digest', () => {
  it('is the documented one: a line per regular file in byte order of the paths, the executable bit marked', () => {
    const dir = tempDir('autoctx-agent-digest-');
    fs.mkdirSync(path.join(dir, 'b/é'), {recursive: true});
    fs.mkdirSync(path.join(dir, 'empty'));
    fs.writeFileSync(path.join(dir, 'b/é/x.txt'), 'x\n');
    fs.writeFileSync(path.join(dir, 'a.sh'), '#!/bin/sh\n', {mode: 0o755});
    fs.writeFileSync(path.join(dir, 'B.txt'), 'upper\n');
    const expected = sha(`${sha('upper\n')} - B.txt\n${sha('#!/bin/sh\n')} x a.sh\n${sha('x\n')} - b/é/x.txt\n`);
    expect(treeDigest(dir)).toBe(expected);
    // A tree of text files given in a fixture has the digest those files would have on disk.
    fs.rmSync(path.join(dir, 'a.sh'));
    expect(treeDigest(dir)).toBe(digestOfTexts({'b/é/x.txt': 'x\n', 'B.txt': 'upper\n'}));
    fs.symlinkSync('B.txt', path.join(dir, 'link'));
    expect(() => treeDigest(dir)).toThrow(/not a regular file or a folder/);
  });
});

describe("the hosts' reports", () => {
  it("Claude Code: the last result event's answer, duration, cost and every kind of input token", () => {
    const out = lines(
      {type: 'system', subtype: 'init'},
      {
        type: 'result',
        subtype: 'success',
        is_error: false,
        duration_ms: 900,
        result: 'fixed',
        total_cost_usd: 0.5,
        usage: {input_tokens: 3, cache_creation_input_tokens: 10, cache_read_input_tokens: 20, output_tokens: 7},
      },
    );
    expect(hostReport('claude-code', out, 0, 1234, null)).toEqual({
      finalAnswer: 'fixed',
      metrics: {latency_ms: 900, input_tokens: 33, output_tokens: 7, cost_usd: 0.5},
      failure: null,
    });
  });

  it(
    "Claude Code: out of turns is the agent's result; an API " + "error, a crash or no result is the host's failure",
    () => {
      const result = (fields: object) => lines({type: 'result', duration_ms: 5, result: 'r', ...fields});
      expect(hostReport('claude-code', result({subtype: 'error_max_turns', is_error: true}), 1, 9, null).failure).toBe(
        null,
      );
      expect(
        hostReport('claude-code', result({subtype: 'success', is_error: true, result: 'API Error: 401'}), 1, 9, null)
          .failure,
      ).toMatch(/API Error: 401/);
      expect(hostReport('claude-code', 'not json at all', 1, 9, null)).toMatchObject({
        finalAnswer: null,
        metrics: {latency_ms: 9},
        failure: 'claude wrote no result (exit 1)',
      });
      // Figures it did not give are left out, never made up.
      expect(hostReport('claude-code', result({subtype: 'success', is_error: false}), 0, 9, null).metrics).toEqual({
        latency_ms: 5,
      });
    },
  );

  it(
    'Codex: the usage of every completed turn, the last agent ' +
      'message (or --output-last-message), latency measured',
    () => {
      const out = lines(
        {type: 'thread.started'},
        {type: 'item.completed', item: {type: 'agent_message', text: 'first'}},
        {type: 'turn.completed', usage: {input_tokens: 100, cached_input_tokens: 50, output_tokens: 5}},
        {type: 'item.completed', item: {type: 'agent_message', text: 'second'}},
        {type: 'turn.completed', usage: {input_tokens: 10, output_tokens: 1}},
      );
      expect(hostReport('codex', out, 0, 777, null)).toEqual({
        finalAnswer: 'second',
        metrics: {latency_ms: 777, input_tokens: 110, output_tokens: 6},
        failure: null,
      });
      expect(hostReport('codex', out, 0, 777, 'from the file').finalAnswer).toBe('from the file');
      expect(hostReport('codex', lines({type: 'turn.failed', error: {message: 'quota'}}), 1, 5, null).failure).toBe(
        'codex reported: quota',
      );
    },
  );
});

describe("the checker's score line", () => {
  it('is the last stdout line {"score": x} with x from 0 to 1; anything else leaves the exit code to decide', () => {
    expect(scoreLine('ran 10 tests\n{"score": 0.7}\n')).toBe(0.7);
    expect(scoreLine('{"score": 0.7}\nall good\n')).toBeUndefined();
    expect(scoreLine('{"passed": true}')).toBeUndefined();
    expect(scoreLine('{not json')).toBeUndefined();
    expect(() => scoreLine('{"score": 1.5}')).toThrow(/not a number from 0 to 1/);
    expect(() => scoreLine('{"score": "1"}')).toThrow(/not a number from 0 to 1/);
  });
});

describe('bounds', () => {
  it('keeps head and tail within the bound, cut at character boundaries, and says how much was left out', () => {
    const text = `${'é'.repeat(5000)}middle${'€'.repeat(5000)}`;
    const kept = boundedText(text, 4096);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(4096);
    expect(kept).not.toContain('\uFFFD');
    expect(kept.startsWith('é')).toBe(true);
    expect(kept.endsWith('€')).toBe(true);
    expect(kept).toMatch(/\[… \d+ bytes left out by autoctx/);
    expect(boundedText('short', 4096)).toBe('short');
  });

  it('keeps a stream whole while it fits, else its first and last bytes', () => {
    const h = new HeadTail(4, 8);
    h.push(Buffer.from('abcdef'));
    expect([h.whole, h.text()]).toEqual([true, 'abcdef']);
    for (let i = 0; i < 10; i++) h.push(Buffer.from('0123456789'));
    expect(h.whole).toBe(false);
    expect(h.text().startsWith('abcd')).toBe(true);
    expect(h.text().endsWith('0123456789')).toBe(true);
    expect(h.total).toBe(106);
  });

  it('shows a text change line by line and names a binary one', () => {
    const diff = workspaceDiff([
      {path: 'a.txt', before: Buffer.from('one\n'), after: Buffer.from('two\n')},
      {path: 'new.txt', before: null, after: Buffer.from('hello\n')},
      {path: 'img.bin', before: Buffer.from([0, 1, 2]), after: null},
    ]);
    expect(diff).toContain('-one\n+two');
    expect(diff).toContain('--- /dev/null\n+++ b/new.txt');
    expect(diff).toContain('Files a/img.bin and /dev/null differ (3 → 0 bytes; binary or large, not shown)');
  });
});

describe('an agent task', () => {
  it('refuses a path that is both a file and a folder of others, and a dir_digest without its dir', () => {
    const task = (state: object) => ({
      initial_state: {agent_task: 1 as const, checker: {command: ['true']}, ...state},
      observation: {prompt: 'p'},
    });
    expect(() => agentTaskOf(task({files: {a: 'x', 'a/b': 'y'}}))).toThrow(/both as a file and as a folder/);
    expect(() => agentTaskOf(task({checker: {command: ['true'], files: {t: '', 't/u': ''}}}))).toThrow(
      /checker.files names "t"/,
    );
    expect(() => agentTaskOf(task({dir_digest: 'a'.repeat(64)}))).toThrow(/without "dir"/);
    expect(agentTaskOf(task({files: {'a/b': 'y', 'a/c': 'z'}, git: true}))).toMatchObject({git: true, prompt: 'p'});
  });
});
