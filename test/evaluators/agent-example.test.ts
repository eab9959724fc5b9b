import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';
import {fakeReply, KNOWN_TASKS, REWARDED_INSTRUCTION, startFakeModel} from '../helpers/fake-model.js';

// The agent example's pieces without an agent host: its tasks' checkers pass and fail deterministically, and its fake
// model's answer depends on whether the context holds the instruction it rewards (the real hosts run in
// test/e2e/agent.e2e.ts).
const AGENT = path.join(PROJECT_ROOT, 'knowledge-example/agent');
const TASKS = path.join(AGENT, 'tasks');

interface AgentTask {
  fixture: string;
  initial_state: {
    agent_task: 1;
    files: Record<string, string>;
    git?: boolean;
    checker: {command: string[]; files: Record<string, string>; timeout_seconds: number};
  };
  observation: {prompt: string};
}
const tasks = (): AgentTask[] =>
  fs
    .readFileSync(path.join(TASKS, 'fixtures.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));

/** A task's workspace as the evaluator leaves it for the checker: its files, then the checker's files. */
function workspace(task: AgentTask): string {
  const dir = tempDir('autoctx-agent-task-');
  for (const [rel, text] of Object.entries({...task.initial_state.files, ...task.initial_state.checker.files})) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), {recursive: true});
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

/** Run the task's checker on a final answer: its exit status and what it printed. */
function check(task: AgentTask, dir: string, answer: string): {status: number | null; out: string} {
  const file = path.join(dir, '..', `${path.basename(dir)}.answer.txt`);
  fs.writeFileSync(file, answer);
  const [cmd, ...args] = task.initial_state.checker.command;
  const r = spawnSync(cmd === 'node' ? process.execPath : cmd!, args, {
    cwd: dir,
    encoding: 'utf8',
    env: {PATH: process.env.PATH, AUTOCTX_FINAL_ANSWER: file},
  });
  return {status: r.status, out: `${r.stdout}${r.stderr}`};
}

const playbook = (bundle: string) => fs.readFileSync(path.join(AGENT, bundle, 'playbook/playbook.md'), 'utf8');
const lower = (s: string) => s.toLowerCase();

describe('the agent example', () => {
  it('fixtures.jsonl is what make-fixtures.js writes', () => {
    const r = spawnSync(process.execPath, [path.join(TASKS, 'make-fixtures.js'), '--check'], {encoding: 'utf8'});
    expect([r.status, r.stderr]).toEqual([0, '']);
  });

  it('only the good candidate holds the rewarded instruction; no task or fixture id gives it away', () => {
    expect(lower(playbook('candidate-result-line'))).toContain(lower(REWARDED_INSTRUCTION));
    for (const bundle of ['baseline', 'candidate-terse'])
      expect([bundle, lower(playbook(bundle)).includes(lower(REWARDED_INSTRUCTION))]).toEqual([bundle, false]);
    const all = tasks();
    expect(all.map((t) => t.fixture)).toEqual([
      'task-pkg-version',
      'task-todo-count',
      'task-unexported-fn',
      'task-default-port',
    ]);
    for (const t of all) {
      expect(lower(t.observation.prompt)).not.toContain(lower(REWARDED_INSTRUCTION));
      expect(t.observation.prompt).not.toContain(t.fixture);
      // The fake model knows every task by its question.
      expect(fakeReply({messages: [{role: 'user', content: t.observation.prompt}]}).task).toBe(t.observation.prompt);
    }
    expect(KNOWN_TASKS).toHaveLength(all.length);
  });

  it.each(tasks().map((t) => [t.fixture, t] as const))(
    "%s: the checker passes the fake model's answer with the instruction and fails it without, every time",
    (_name, task) => {
      const dir = workspace(task);
      const body = (bundle: string) => ({
        system: [{type: 'text', text: playbook(bundle)}],
        messages: [{role: 'user', content: task.observation.prompt}],
      });
      const good = fakeReply(body('candidate-result-line'));
      const bad = fakeReply(body('candidate-terse'));
      expect([good.rewarded, bad.rewarded]).toEqual([true, false]);
      for (let i = 0; i < 2; i++) {
        expect(check(task, dir, good.text)).toEqual({status: 0, out: expect.stringMatching(/^pass: /)});
        expect(check(task, dir, bad.text)).toEqual({status: 1, out: expect.stringMatching(/^fail: /)});
      }
      // A wrong value on the RESULT line, or the line not last, fails; blank lines and spaces around it do not matter.
      const value = good.text.split('\n').pop()!;
      expect(check(task, dir, `${bad.text}\nRESULT: 0.0.0-wrong`).status).toBe(1);
      expect(check(task, dir, `${value}\nThat is all.`).status).toBe(1);
      expect(check(task, dir, `${bad.text}\n\n  ${value}  \n\n`).status).toBe(0);
      // The value is read from the workspace: the same answer fails once the file says otherwise.
      const first = Object.keys(task.initial_state.files)[0]!;
      const file = path.join(dir, first);
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/2\.4\.1|TODO|clamp|8080/g, 'X'));
      expect(check(task, dir, good.text).status).not.toBe(0);
      // Without the answer file's variable it is a usage error (exit 2), never a pass.
      const [, ...args] = task.initial_state.checker.command;
      expect(spawnSync(process.execPath, args, {cwd: dir, env: {PATH: process.env.PATH}}).status).toBe(2);
    },
  );

  it.each([
    ['Anthropic messages', '/v1/messages', 'content_block_delta'],
    ['OpenAI responses', '/v1/responses', 'response.output_text.delta'],
  ])(
    'the fake %s API streams the RESULT line only when the context holds the instruction, and logs every request',
    async (_api, url, delta) => {
      const log = path.join(tempDir('autoctx-fake-model-'), 'requests.jsonl');
      const fake = await startFakeModel({log});
      const post = (body: unknown) =>
        new Promise<string>((resolve, reject) => {
          const req = http.request(`${fake.url}${url}`, {
            method: 'POST',
            headers: {'content-type': 'application/json'},
          });
          req.on('response', (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve(text));
          });
          req.on('error', reject);
          req.end(JSON.stringify(body));
        });
      try {
        const prompt = KNOWN_TASKS[0]!.question;
        const body = (context: string) => ({
          model: 'm',
          stream: true,
          input: [
            {role: 'developer', content: context},
            {role: 'user', content: prompt},
          ],
          messages: [{role: 'user', content: `${context}\n${prompt}`}],
        });
        const withIt = await post(body(playbook('candidate-result-line')));
        const without = await post(body(playbook('baseline')));
        expect(withIt).toContain(delta);
        expect(withIt).toContain('RESULT: 2.4.1');
        expect(without).toContain('package.json declares version 2.4.1.');
        expect(without).not.toContain('RESULT:');
        // The same request, the same answer (but for its fresh ids and time).
        const same = (s: string) => s.replace(/(msg|resp)_[0-9a-f]*/g, 'ID').replace(/"created_at":\d+/g, 'T');
        expect(same(await post(body(playbook('candidate-result-line'))))).toBe(same(withIt));
        const logged = fs
          .readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        expect(logged.map((e) => [e.method, e.url])).toEqual([
          ['POST', url],
          ['POST', url],
          ['POST', url],
        ]);
        expect(logged[0].body).toEqual(body(playbook('candidate-result-line')));
      } finally {
        await fake.close();
      }
    },
  );

  it('the fake model as a program prints its URL and answers there', async () => {
    const {spawn} = await import('node:child_process');
    const child = spawn(process.execPath, [path.join(AGENT, 'fake-model.js')], {stdio: ['ignore', 'pipe', 'pipe']});
    try {
      const url = await new Promise<string>((resolve) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const res = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        body: JSON.stringify({model: 'm', messages: [{role: 'user', content: KNOWN_TASKS[3]!.question}]}),
      });
      const answer = (await res.json()) as {content: Array<{text: string}>};
      expect(answer.content[0]!.text).toBe('config/default.json sets the server port to 8080.');
    } finally {
      child.kill();
    }
  });

  it.each([
    [['--host', 'gemini'], /--host must be claude-code, codex or both/],
    [['--real', '--host', 'claude-code'], /--real with claude-code needs ANTHROPIC_API_KEY/],
    [['--host-bin', '/nonexistent/claude'], /--host-bin names one host program/],
    [['--host', 'codex', '--host-bin', '/nonexistent/codex'], /--host-bin \/nonexistent\/codex: no such file/],
    [['--fast'], /unknown option --fast/],
  ])('npm run example:agent %j refuses with one line and exit 2, before anything is written', (args, message) => {
    const r = spawnSync(process.execPath, [path.join(PROJECT_ROOT, 'knowledge-example/run-agent.js'), ...args], {
      encoding: 'utf8',
      env: {PATH: process.env.PATH},
    });
    expect([r.status, r.stdout]).toEqual([2, '']);
    expect(r.stderr).toMatch(message);
  });
});
