// A fake model API on 127.0.0.1 for the end-to-end hook tests: Anthropic's Messages API
// (POST /v1/messages, streamed) and OpenAI's Responses API (POST /v1/responses, streamed).
// Every request body is kept, in order: the only place that shows what a model was given.
import http from 'node:http';

function sse(res, events) {
  res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive'});
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  res.end();
}

function anthropic(res, body) {
  const model = body.model ?? 'claude-fake';
  const id = `msg_${Math.random().toString(16).slice(2)}`;
  const text = 'ok';
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
        usage: {input_tokens: 10, output_tokens: 1},
      }),
    );
    return;
  }
  sse(res, [
    [
      'message_start',
      {
        type: 'message_start',
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {input_tokens: 10, output_tokens: 0},
        },
      },
    ],
    ['content_block_start', {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}],
    ['content_block_delta', {type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text}}],
    ['content_block_stop', {type: 'content_block_stop', index: 0}],
    [
      'message_delta',
      {type: 'message_delta', delta: {stop_reason: 'end_turn', stop_sequence: null}, usage: {output_tokens: 1}},
    ],
    ['message_stop', {type: 'message_stop'}],
  ]);
}

function openai(res, body) {
  const id = `resp_${Math.random().toString(16).slice(2)}`;
  const item = {
    type: 'message',
    id: `msg_${id}`,
    status: 'completed',
    role: 'assistant',
    content: [{type: 'output_text', text: 'ok', annotations: []}],
  };
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'completed',
    model: body.model ?? 'gpt-fake',
    output: [item],
    usage: {
      input_tokens: 10,
      input_tokens_details: {cached_tokens: 0},
      output_tokens: 1,
      output_tokens_details: {reasoning_tokens: 0},
      total_tokens: 11,
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
      {type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: 'ok'},
    ],
    ['response.output_item.done', {type: 'response.output_item.done', output_index: 0, item}],
    ['response.completed', {type: 'response.completed', response}],
  ]);
}

/** Start the server; resolves to {port, requests, close}. */
export function startFakeModels() {
  const requests = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (d) => (data += d));
    req.on('end', () => {
      let body = {};
      try {
        body = data ? JSON.parse(data) : {};
      } catch {
        body = {raw: data};
      }
      const url = req.url ?? '';
      requests.push({method: req.method, url, body});
      if (req.method === 'POST' && url.startsWith('/v1/messages') && !url.includes('count_tokens'))
        return anthropic(res, body);
      if (req.method === 'POST' && url.startsWith('/v1/responses')) return openai(res, body);
      res.writeHead(200, {'content-type': 'application/json'});
      res.end(url.includes('count_tokens') ? '{"input_tokens": 10}' : '{}');
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({port: server.address().port, requests, close: () => new Promise((r) => server.close(r))}),
    ),
  );
}
