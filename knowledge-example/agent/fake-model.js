#!/usr/bin/env node
// A fake model API on 127.0.0.1 for the agent example and the end-to-end tests: Anthropic's
// Messages API (POST /v1/messages, streamed or not) and OpenAI's Responses API (POST /v1/responses,
// streamed), which Claude Code and Codex speak. It "solves" the four example tasks
// (tasks/fixtures.jsonl): it knows each task's answer by its question, and it ends the answer with
// the line the release bot reads ("RESULT: <value>") only when the context it was given holds the
// instruction to do so (candidate-result-line's playbook). So a bundle with that instruction passes
// the tasks' checkers and one without it fails them, deterministically. Every request is appended
// to the log file as one JSON line, before it is answered: the only place that shows what a model
// was given.
//
//   node knowledge-example/agent/fake-model.js [--log FILE] [--port N]
//
// prints its base URL (http://127.0.0.1:<port>) on the first line of stdout and serves until killed.
import {appendFileSync} from 'node:fs';
import http from 'node:http';
import {fileURLToPath} from 'node:url';

/** The instruction the fake model rewards, as it is looked for in a request (case ignored). */
export const REWARDED_INSTRUCTION = 'End your final answer with a RESULT line';

/** The question of each example task, as the fake model recognizes it, with its answer and the value alone. */
export const KNOWN_TASKS = [
  {
    question: 'Which version does package.json declare?',
    answer: 'package.json declares version 2.4.1.',
    value: '2.4.1',
  },
  {
    question: 'How many TODO comments are there in the files under src/?',
    answer: 'There are 3 TODO comments under src/: two in src/sync.js and one in src/retry.js.',
    value: '3',
  },
  {
    question: 'Which function defined in src/math.js is not exported?',
    answer: 'clamp is defined in src/math.js but not exported.',
    value: 'clamp',
  },
  {
    question: 'Which port does config/default.json set for the server?',
    answer: 'config/default.json sets the server port to 8080.',
    value: '8080',
  },
];

/**
 * What the fake model answers to a request body: the answer of the task whose question it holds
 * (else "ok"), with the RESULT line when the body holds the rewarded instruction.
 */
export function fakeReply(body) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const lower = text.toLowerCase();
  const rewarded = lower.includes(REWARDED_INSTRUCTION.toLowerCase());
  const task = KNOWN_TASKS.find((t) => text.includes(t.question));
  if (!task) return {text: 'ok', task: null, rewarded};
  return {text: rewarded ? `${task.answer}\nRESULT: ${task.value}` : task.answer, task: task.question, rewarded};
}

function sse(res, events) {
  res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'});
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

const tokens = (s) => Math.max(1, Math.ceil(Buffer.byteLength(s, 'utf8') / 4));

function anthropic(res, body, text, usage) {
  const model = body.model ?? 'claude-fake';
  const id = `msg_${Math.random().toString(16).slice(2)}`;
  if (!body.stream) {
    res.writeHead(200, {'content-type': 'application/json'});
    res.end(
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{type: 'text', text}],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      }),
    );
    return;
  }
  const message = {id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null};
  sse(res, [
    ['message_start', {type: 'message_start', message: {...message, usage: {...usage, output_tokens: 0}}}],
    ['content_block_start', {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}],
    ['content_block_delta', {type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text}}],
    ['content_block_stop', {type: 'content_block_stop', index: 0}],
    [
      'message_delta',
      {
        type: 'message_delta',
        delta: {stop_reason: 'end_turn', stop_sequence: null},
        usage: {output_tokens: usage.output_tokens},
      },
    ],
    ['message_stop', {type: 'message_stop'}],
  ]);
}

function openai(res, body, text, usage) {
  const id = `resp_${Math.random().toString(16).slice(2)}`;
  const item = {
    type: 'message',
    id: `msg_${id}`,
    status: 'completed',
    role: 'assistant',
    content: [{type: 'output_text', text, annotations: []}],
  };
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: body.model ?? 'gpt-fake',
    output: [item],
    usage: {
      input_tokens: usage.input_tokens,
      input_tokens_details: {cached_tokens: 0},
      output_tokens: usage.output_tokens,
      output_tokens_details: {reasoning_tokens: 0},
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
  sse(res, [
    ['response.created', {type: 'response.created', response: {...response, status: 'in_progress', output: []}}],
    [
      'response.output_item.added',
      {type: 'response.output_item.added', output_index: 0, item: {...item, status: 'in_progress', content: []}},
    ],
    [
      'response.output_text.delta',
      {type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: text},
    ],
    ['response.output_item.done', {type: 'response.output_item.done', output_index: 0, item}],
    ['response.completed', {type: 'response.completed', response}],
  ]);
}

/**
 * Start the server on 127.0.0.1 (port 0: a free one). `reply(body)` gives the text of an answer
 * (default: fakeReply's); `log` is a file every request is appended to as a JSON line
 * {at, method, url, body}; `onRequest(entry)` is called for each before it is answered. Resolves to
 * {port, url, requests, close}: `requests` holds every request in order.
 */
export function startFakeModel({reply = (body) => fakeReply(body).text, log, onRequest, port = 0} = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      let body = {};
      try {
        body = data ? JSON.parse(data) : {};
      } catch (error) {
        // A body that is not JSON is kept as it came (and answered "ok").
        if (!(error instanceof SyntaxError)) throw error;
        body = {raw: data};
      }
      const url = req.url ?? '';
      const entry = {at: new Date().toISOString(), method: req.method, url, body};
      requests.push(entry);
      if (log) appendFileSync(log, `${JSON.stringify(entry)}\n`);
      onRequest?.(entry);
      const isMessages = url.startsWith('/v1/messages') && !url.includes('count_tokens');
      if (req.method === 'POST' && (isMessages || url.startsWith('/v1/responses'))) {
        const text = reply(body);
        const usage = {input_tokens: tokens(data), output_tokens: tokens(text)};
        return isMessages ? anthropic(res, body, text, usage) : openai(res, body, text, usage);
      }
      res.writeHead(200, {'content-type': 'application/json'});
      res.end(url.includes('count_tokens') ? JSON.stringify({input_tokens: tokens(data)}) : '{}');
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const {port: bound} = server.address();
      resolve({
        port: bound,
        url: `http://127.0.0.1:${bound}`,
        requests,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections?.();
            server.close(() => r());
          }),
      });
    });
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const value = (flag) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const fake = await startFakeModel({log: value('--log'), port: Number(value('--port') ?? 0)});
  process.stdout.write(`${fake.url}\n`);
  const stop = () => fake.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
