// A fake model API on 127.0.0.1 for the end-to-end hook tests: the agent example's fake model
// (knowledge-example/agent/fake-model.js: Anthropic's Messages API and OpenAI's Responses API,
// streamed), answering "ok" to everything. Every request body is kept, in order: the only place that
// shows what a model was given.
import {startFakeModel} from '../../knowledge-example/agent/fake-model.js';

/** Start the server; resolves to {port, requests, close}. */
export function startFakeModels() {
  return startFakeModel({reply: () => 'ok'});
}
