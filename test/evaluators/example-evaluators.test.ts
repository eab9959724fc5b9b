import {spawn} from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {tempDir} from '../helpers/tree.js';

// Two evaluators beside the deterministic one: Python with the standard library only, and one
// that asks a real model (here a fake OpenAI-compatible or Anthropic API served on 127.0.0.1).
const EXAMPLE = path.join(PROJECT_ROOT, 'knowledge-example');
const FIXTURES = path.join(EXAMPLE, 'demo/fixtures.jsonl');
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

/** The CLI as its own process, asynchronously (the fake API answers in this process meanwhile). */
function autoctx(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{status: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'bin/run.js'), ...args], {
      cwd: PROJECT_ROOT,
      env: {...process.env, NODE_OPTIONS: '', NO_COLOR: '1', ...env},
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({status, stdout, stderr}));
  });
}

async function tree(): Promise<string> {
  const dir = tempDir('autoctx-evaluators-');
  dirs.push(dir);
  const knowledge = path.join(dir, 'knowledge');
  expect(
    (
      await autoctx([
        'init',
        '--scenario',
        'demo',
        '--from',
        path.join(EXAMPLE, 'demo/baseline'),
        '--knowledge',
        knowledge,
      ])
    ).status,
  ).toBe(0);
  return knowledge;
}
const answers = (stdout: string) =>
  (JSON.parse(stdout) as {exchanges: Array<{answer: unknown}>}).exchanges.map((x) => x.answer);

describe('the example evaluators', () => {
  it('the Python one (standard library only) answers ' +
    'exactly as the JavaScript one, per arm and persistent', async () => {
    const k = await tree();
    const check = (evaluator: string, mode: string) =>
      autoctx([
        'evaluator',
        'check',
        '--evaluator',
        evaluator,
        '--evaluator-mode',
        mode,
        '--fixtures',
        FIXTURES,
        '--pairs',
        '4',
        '--knowledge',
        k,
        '--json',
      ]);
    const js = await check(`node ${path.join(EXAMPLE, 'evaluator.js')}`, 'persistent');
    expect(js.status).toBe(0);
    for (const mode of ['per-arm', 'persistent']) {
      const py = await check(`python3 ${path.join(EXAMPLE, 'evaluators/evaluator.py')}`, mode);
      expect([mode, py.status, py.stderr]).toEqual([mode, 0, '']);
      expect(answers(py.stdout)).toEqual(answers(js.stdout));
    }
  }, 60_000);

  it.each(['openai', 'anthropic'] as const)(
    'the model one, against a fake %s API: the bundle and the ' +
      'case in the prompt, nothing of the experiment, temperature 0',
    async (api) => {
      const k = await tree();
      const seen: Array<{url: string; headers: http.IncomingHttpHeaders; body: any}> = [];
      // The model's reply covers two of the first fixture's four needs.
      const reply = 'Please check the tray icon and tell me your operating system.';
      const server = http.createServer((req, res) => {
        let body = '';
        req.on('data', (d) => (body += d));
        req.on('end', () => {
          seen.push({url: req.url!, headers: req.headers, body: JSON.parse(body)});
          res.setHeader('content-type', 'application/json');
          res.end(
            JSON.stringify(
              api === 'openai'
                ? {choices: [{message: {role: 'assistant', content: reply}}]}
                : {content: [{type: 'text', text: reply}]},
            ),
          );
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as {port: number}).port;
      const env =
        api === 'openai'
          ? {OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`, ANTHROPIC_API_KEY: ''}
          : {ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, OPENAI_API_KEY: ''};
      try {
        const r = await autoctx(
          [
            'evaluator',
            'check',
            '--evaluator',
            `node ${path.join(EXAMPLE, 'evaluators/model.js')}`,
            '--evaluator-mode',
            'persistent',
            '--fixtures',
            FIXTURES,
            '--pairs',
            '1',
            '--knowledge',
            k,
            '--json',
          ],
          env,
        );
        expect([r.status, r.stderr]).toEqual([0, '']);
        const result = JSON.parse(r.stdout);
        expect(answers(r.stdout)).toEqual([
          {score: 0.5, valid: true},
          {score: 0.5, valid: true},
        ]);
        expect(seen).toHaveLength(2);
        const request = result.exchanges[0].request;
        for (const s of seen) {
          expect(s.url).toBe(api === 'openai' ? '/v1/chat/completions' : '/v1/messages');
          expect(api === 'openai' ? s.headers.authorization : s.headers['x-api-key']).toBe(
            api === 'openai' ? 'Bearer test-key' : 'test-key',
          );
          expect(s.body.temperature).toBe(0);
          const prompt = JSON.stringify(s.body);
          // The bundle (its playbook) and the case (state and question) are there...
          expect(prompt).toContain('Restate the customer');
          expect(prompt).toContain('Files stopped syncing on my laptop');
          expect(prompt).toContain('Ubuntu 24.04');
          // ...and nothing of the experiment: no digest, seed, lane, plan, nor the needs it is graded on.
          for (const secret of [
            request.fixture_digest,
            request.plan_digest,
            request.bundle_digest,
            '"seed"',
            'screen',
            'summary of what was already tried',
          ])
            expect([secret, prompt.includes(secret)]).toEqual([secret, false]);
        }
      } finally {
        server.close();
      }
    },
    60_000,
  );

  it('the model one without a key fails with one clear line on its stderr', async () => {
    const k = await tree();
    const r = await autoctx(
      [
        'evaluator',
        'check',
        '--evaluator',
        `node ${path.join(EXAMPLE, 'evaluators/model.js')}`,
        '--fixtures',
        FIXTURES,
        '--pairs',
        '1',
        '--knowledge',
        k,
        '--json',
      ],
      {OPENAI_API_KEY: '', ANTHROPIC_API_KEY: ''},
    );
    expect(r.status).toBe(8);
    expect(JSON.parse(r.stdout).exchanges[0].error.stderr_tail).toEqual([
      'model evaluator: set OPENAI_API_KEY (and OPENAI_BASE_URL ' +
        'for another OpenAI-compatible API) or ANTHROPIC_API_KEY',
    ]);
  }, 60_000);
});
