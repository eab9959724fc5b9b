#!/usr/bin/env node
// Writes fixtures.jsonl beside this file: the agent example's four tasks in the agent-task fixture
// format (schemas/agent-task.schema.json), one JSON line each. Each task is a small repository (its
// files inline, one of them a git repository), the question the agent is asked (the only thing it
// is told), and the checker the evaluator runs in the workspace after the agent stopped (check.cjs
// beside this file, copied in only then). `--check` exits 1 when fixtures.jsonl is not what this
// script writes (a test runs it).
import {existsSync, readFileSync, writeFileSync} from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const checker = readFileSync(path.join(here, 'check.cjs'), 'utf8');
const json = (value) => `${JSON.stringify(value, null, 2)}\n`;

const TASKS = [
  {
    fixture: 'task-pkg-version',
    git: true,
    files: {
      'package.json': json({name: 'acme-sync-cli', version: '2.4.1', private: true, type: 'module'}),
      'README.md': '# acme-sync-cli\n\nThe command-line client of Acme Sync.\n',
      'CHANGELOG.md':
        '# Changelog\n\n## 2.4.1\n\n- Retry uploads after a network error.\n\n## 2.4.0\n\n- Pause sync.\n',
    },
    prompt: 'Which version does package.json declare?',
  },
  {
    fixture: 'task-todo-count',
    files: {
      'src/sync.js':
        'export async function sync(files) {\n  // TODO: skip files that did not change\n' +
        '  for (const f of files) await upload(f); // TODO: upload in parallel\n}\n\n' +
        'async function upload(file) {\n  return file;\n}\n',
      'src/retry.js':
        'export async function retry(fn, times = 3) {\n  // TODO: back off between attempts\n' +
        '  for (let i = 1; ; i++) {\n    try {\n      return await fn();\n    } catch (e) {\n' +
        '      if (i >= times) throw e;\n    }\n  }\n}\n',
      'src/index.js': "export {sync} from './sync.js';\nexport {retry} from './retry.js';\n",
      'NOTES.md': 'TODO lists live in the issue tracker, not here.\n',
    },
    prompt: 'How many TODO comments are there in the files under src/?',
  },
  {
    fixture: 'task-unexported-fn',
    files: {
      'src/math.js':
        'export function add(a, b) {\n  return clamp(a + b);\n}\n\n' +
        'export function scale(a, k) {\n  return clamp(a * k);\n}\n\n' +
        'function clamp(x) {\n  return Math.min(100, Math.max(0, x));\n}\n',
    },
    prompt: 'Which function defined in src/math.js is not exported?',
  },
  {
    fixture: 'task-default-port',
    files: {
      'config/default.json': json({server: {host: '127.0.0.1', port: 8080}, log_level: 'info'}),
      'config/production.json': json({server: {port: 443}, log_level: 'warn'}),
    },
    prompt: 'Which port does config/default.json set for the server?',
  },
];

const lines = TASKS.map(({fixture, git, files, prompt}) =>
  JSON.stringify({
    fixture,
    initial_state: {
      agent_task: 1,
      files,
      ...(git ? {git: true} : {}),
      checker: {
        command: ['node', 'check.cjs', fixture.replace(/^task-/, '')],
        files: {'check.cjs': checker},
        timeout_seconds: 30,
      },
    },
    observation: {prompt},
  }),
);
const text = `${lines.join('\n')}\n`;
const out = path.join(here, 'fixtures.jsonl');
if (process.argv.includes('--check')) {
  const current = existsSync(out) ? readFileSync(out, 'utf8') : '';
  if (current !== text) {
    const script = path.relative(process.cwd(), fileURLToPath(import.meta.url));
    console.error(`${path.relative(process.cwd(), out)} is out of date: run node ${script}`);
    process.exit(1);
  }
} else writeFileSync(out, text);
