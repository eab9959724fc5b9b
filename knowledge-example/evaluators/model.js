#!/usr/bin/env node
// An evaluator that asks a real model. For each request it gives the model the
// materialized bundle (every component file in bundle_dir) as its instructions
// and the fixture's state and observation as the case, at temperature 0, and
// scores the reply by the share of the fixture's needs it covers. The prompt
// never holds the fixture digest, the seed, the lane or the plan: the model
// sees what a deployed agent would see, nothing of the experiment.
//
//   OpenAI or any OpenAI-compatible API: OPENAI_API_KEY, optional OPENAI_BASE_URL
//     (default https://api.openai.com/v1) and AUTOCTX_MODEL (default gpt-4o-mini).
//   Anthropic: ANTHROPIC_API_KEY, optional ANTHROPIC_BASE_URL (default
//     https://api.anthropic.com) and AUTOCTX_MODEL (default claude-3-5-haiku-latest).
//
//   autoctx confirm <candidate> --evaluator "node knowledge-example/evaluators/model.js" \
//     --evaluator-mode persistent --fixtures knowledge-example/demo/fixtures.jsonl --timeout 300
import {readFileSync, readdirSync, statSync} from 'node:fs';
import path from 'node:path';
import {createInterface} from 'node:readline';

function bundleInstructions(dir) {
  const parts = [];
  for (const kind of readdirSync(dir).sort()) {
    const sub = path.join(dir, kind);
    if (!statSync(sub).isDirectory()) continue;
    for (const file of readdirSync(sub).sort())
      parts.push(`## ${kind}/${file}\n\n${readFileSync(path.join(sub, file), 'utf8').trim()}`);
  }
  return `You are a support agent. Follow this context exactly.\n\n${parts.join('\n\n')}`;
}

/** What the model is told about the case: the fixture's state and observation, without what it is expected to cover. */
function caseText(request) {
  const {needs: _needs, ...observation} = request.observation ?? {};
  return (
    `Customer state:\n${JSON.stringify(request.initial_state, null, 2)}\n\nCustomer ` +
    `message:\n${JSON.stringify(observation, null, 2)}\n\nReply to the customer.`
  );
}

async function post(url, headers, body) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

async function reply(system, user) {
  const model = process.env.AUTOCTX_MODEL;
  if (process.env.ANTHROPIC_API_KEY) {
    const base = (process.env.ANTHROPIC_BASE_URL ?? 'https://api.anthropic.com').replace(/\/$/, '');
    const r = await post(
      `${base}/v1/messages`,
      {'x-api-key': process.env.ANTHROPIC_API_KEY, 'anthropic-version': '2023-06-01'},
      {
        model: model ?? 'claude-3-5-haiku-latest',
        max_tokens: 800,
        temperature: 0,
        system,
        messages: [{role: 'user', content: user}],
      },
    );
    return (r.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
  }
  if (process.env.OPENAI_API_KEY) {
    const base = (process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1').replace(/\/$/, '');
    const r = await post(
      `${base}/chat/completions`,
      {authorization: `Bearer ${process.env.OPENAI_API_KEY}`},
      {
        model: model ?? 'gpt-4o-mini',
        temperature: 0,
        messages: [
          {role: 'system', content: system},
          {role: 'user', content: user},
        ],
      },
    );
    return r.choices?.[0]?.message?.content ?? '';
  }
  throw new Error('set OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible API) or ANTHROPIC_API_KEY');
}

async function answer(request) {
  const text = (await reply(bundleInstructions(request.bundle_dir), caseText(request))).toLowerCase();
  const needs = request.observation.needs;
  const covered = needs.filter((n) => text.includes(n.toLowerCase())).length;
  return {
    request_id: request.request_id,
    fixture_digest: request.fixture_digest,
    score: covered / needs.length,
    valid: text.trim() !== '',
  };
}

// One request at a time, in order: a persistent evaluator answers each line before the next.
let queue = Promise.resolve();
createInterface({input: process.stdin}).on('line', (line) => {
  if (line.trim() === '') return;
  queue = queue.then(async () => {
    // biome-ignore lint/plugin: reported, not swallowed: the message goes to stderr and the process exits 1
    try {
      process.stdout.write(`${JSON.stringify(await answer(JSON.parse(line)))}\n`);
    } catch (error) {
      process.stderr.write(`model evaluator: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    }
  });
});
