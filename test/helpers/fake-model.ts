// @ts-expect-error a plain ES module of the example
import * as js from '../../knowledge-example/agent/fake-model.js';

/**
 * The agent example's fake model API (knowledge-example/agent/fake-model.js), typed for the tests: Anthropic messages
 * and OpenAI responses on 127.0.0.1, answering each example task, with its RESULT line only when the request holds
 * the rewarded instruction.
 */
export interface FakeRequest {
  at: string;
  method: string;
  url: string;
  body: Record<string, unknown>;
}
export interface FakeModel {
  port: number;
  url: string;
  /** Every request received, in order. */
  requests: FakeRequest[];
  close(): Promise<void>;
}
export interface FakeModelOptions {
  reply?: (body: unknown) => string;
  /** A file every request is appended to, one JSON line each. */
  log?: string;
  onRequest?: (entry: FakeRequest) => void;
}
export interface FakeReply {
  text: string;
  task: string | null;
  rewarded: boolean;
}

export const startFakeModel = js.startFakeModel as (options?: FakeModelOptions) => Promise<FakeModel>;
export const fakeReply = js.fakeReply as (body: unknown) => FakeReply;
export const KNOWN_TASKS = js.KNOWN_TASKS as ReadonlyArray<{question: string; answer: string; value: string}>;
export const REWARDED_INSTRUCTION = js.REWARDED_INSTRUCTION as string;
