import path from 'node:path';
import {isJsonParseError, rethrowUnless} from '../../../errors.js';
import {PIN_VARIABLE} from '../../../model/delivery/hook-pin.js';

export const AGENT_HOSTS = ['claude-code', 'codex'] as const;
export type AgentHost = (typeof AGENT_HOSTS)[number];

/** What an arm's host reported: its final answer, and its usage figures (latency measured when it gave none). */
export interface HostReport {
  finalAnswer: string | null;
  metrics: {latency_ms: number; input_tokens?: number; output_tokens?: number; cost_usd?: number};
  /** Why the run is not an agent's result but a failure of the host (an API refusing, say); null when it is one. */
  failure: string | null;
}

/** One arm's scratch folder: the host's home and temporary folder, the workspace, and the evaluator's own files. */
export interface Scratch {
  root: string;
  home: string;
  tmp: string;
  work: string;
  out: string;
}

export function scratchLayout(root: string): Scratch {
  return {
    root,
    home: path.join(root, 'home'),
    tmp: path.join(root, 'tmp'),
    work: path.join(root, 'work'),
    out: path.join(root, 'out'),
  };
}

/** The variables of the evaluator's own environment a host may see: the system's, and its API's (never autoctx's). */
const COMMON = [
  /^PATH$/,
  /^LANG$/,
  /^LC_[A-Z]+$/,
  /^TZ$/,
  /^USER$/,
  /^LOGNAME$/,
  /^SHELL$/,
  /^TERM$/,
  /^(https?|no|all)_proxy$/i,
  /^SSL_CERT_(FILE|DIR)$/,
  /^NODE_EXTRA_CA_CERTS$/,
];
const API: Record<AgentHost, RegExp[]> = {
  'claude-code': [
    /^ANTHROPIC_[A-Z0-9_]+$/,
    /^CLAUDE_CODE_USE_(BEDROCK|VERTEX)$/,
    /^AWS_[A-Z0-9_]+$/,
    /^CLOUD_ML_REGION$/,
    /^VERTEX_REGION_[A-Z0-9_]+$/,
    /^GOOGLE_APPLICATION_CREDENTIALS$/,
  ],
  codex: [/^OPENAI_[A-Z0-9_]+$/, /^CODEX_API_KEY$/, /^AZURE_OPENAI_[A-Z0-9_]+$/],
};

/**
 * The host's environment: the system's variables and its API's from the evaluator's environment (so a user points it
 * at a real API, or a test at a fake one), a scratch home, configuration and temporary folder, no telemetry, and the
 * arm's bundle pinned for autoctx's hooks. Nothing else of the evaluator's environment (autoctx's own variables
 * included) reaches the session.
 */
export function hostEnv(host: AgentHost, from: NodeJS.ProcessEnv, s: Scratch, bundle: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(from))
    if (v !== undefined && [...COMMON, ...API[host]].some((r) => r.test(k))) env[k] = v;
  Object.assign(env, {
    HOME: s.home,
    XDG_CONFIG_HOME: path.join(s.home, '.config'),
    XDG_DATA_HOME: path.join(s.home, '.local', 'share'),
    XDG_STATE_HOME: path.join(s.home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(s.home, '.cache'),
    TMPDIR: s.tmp,
    [PIN_VARIABLE]: bundle,
  });
  if (host === 'claude-code')
    Object.assign(env, {
      CLAUDE_CONFIG_DIR: path.join(s.home, '.claude'),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
    });
  else env.CODEX_HOME = path.join(s.home, '.codex');
  return env;
}

/** A TOML basic string (JSON's escapes are TOML's for these). */
const toml = (s: string) => JSON.stringify(s);

/**
 * Codex's config.toml for one arm: the workspace trusted (so its hooks layer loads), plugins off (they would fetch
 * from the internet), and, when the evaluator's environment names OPENAI_BASE_URL, a provider at that address with the
 * key in OPENAI_API_KEY.
 */
export function codexConfig(workspace: string, env: NodeJS.ProcessEnv, model: string | undefined): string {
  const base = env.OPENAI_BASE_URL;
  return [
    ...(model !== undefined ? [`model = ${toml(model)}`] : []),
    ...(base ? ['model_provider = "autoctx"'] : []),
    '',
    ...(base
      ? [
          '[model_providers.autoctx]',
          'name = "autoctx"',
          `base_url = ${toml(base)}`,
          'wire_api = "responses"',
          'env_key = "OPENAI_API_KEY"',
          '',
        ]
      : []),
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    '',
    `[projects.${toml(workspace)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n');
}

/** The host's arguments: headless, machine-readable output, the prompt on stdin. */
export function hostArgs(host: AgentHost, s: Scratch, model: string | undefined, extra: readonly string[]): string[] {
  if (host === 'claude-code')
    return [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      // Edits and shell commands without asking (nobody is there to answer); bypassPermissions is refused as root.
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash',
      ...(model !== undefined ? ['--model', model] : []),
      ...extra,
    ];
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    // Our own scratch home, and our own hook in it: trusted for this run only, nothing written for it.
    '--dangerously-bypass-hook-trust',
    '--sandbox',
    'workspace-write',
    '--output-last-message',
    path.join(s.out, 'last-message.txt'),
    ...(model !== undefined ? ['--model', model] : []),
    ...extra,
    '-',
  ];
}

const count = (n: unknown) => (typeof n === 'number' && Number.isSafeInteger(n) && n >= 0 ? n : undefined);
const amount = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined);

function jsonLines(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    try {
      const v = JSON.parse(t) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch (error) {
      // a line cut by the bound, or not the host's JSON: not a report
      rethrowUnless(error, isJsonParseError);
    }
  }
  return out;
}

const defined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

/**
 * Claude Code's report (`-p --output-format stream-json`): its last `result` event gives the final answer, the
 * duration, the cost and the usage (input tokens: uncached, cache writes and cache reads together).
 */
function claudeReport(stdout: string, code: number | null, ms: number): HostReport {
  const result = jsonLines(stdout)
    .reverse()
    .find((e) => e.type === 'result');
  if (!result) return {finalAnswer: null, metrics: {latency_ms: ms}, failure: `claude wrote no result (exit ${code})`};
  const u = (result.usage ?? {}) as Record<string, unknown>;
  const input = [u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens].map(count);
  const metrics = defined({
    latency_ms: amount(result.duration_ms) ?? ms,
    input_tokens: input[0] === undefined ? undefined : input.reduce<number>((a, b) => a + (b ?? 0), 0),
    output_tokens: count(u.output_tokens),
    cost_usd: amount(result.total_cost_usd),
  });
  const answer = typeof result.result === 'string' ? result.result : null;
  // Out of turns is the agent's own result; any other error is the host's (an API refusing, a crash).
  const failed = (result.is_error === true || code !== 0) && result.subtype !== 'error_max_turns';
  return {
    finalAnswer: answer,
    metrics,
    failure: failed ? `claude reported ${String(result.subtype)}: ${(answer ?? '').slice(0, 200)}` : null,
  };
}

/**
 * Codex's report (`exec --json`): the usage of every completed turn summed, the final answer from
 * --output-last-message or else its last agent message; latency measured.
 */
function codexReport(stdout: string, code: number | null, ms: number, lastMessage: string | null): HostReport {
  const events = jsonLines(stdout);
  let input: number | undefined;
  let output: number | undefined;
  let answer: string | null = null;
  let error: string | null = null;
  for (const e of events) {
    if (e.type === 'turn.completed') {
      const u = (e.usage ?? {}) as Record<string, unknown>;
      if (count(u.input_tokens) !== undefined) input = (input ?? 0) + count(u.input_tokens)!;
      if (count(u.output_tokens) !== undefined) output = (output ?? 0) + count(u.output_tokens)!;
    }
    const item = e.item as Record<string, unknown> | undefined;
    if (e.type === 'item.completed' && item?.type === 'agent_message' && typeof item.text === 'string')
      answer = item.text;
    if (e.type === 'turn.failed' || e.type === 'error')
      error = String((e.error as {message?: unknown} | undefined)?.message ?? e.message ?? e.type);
  }
  const failed = code !== 0 || error !== null;
  return {
    finalAnswer: lastMessage ?? answer,
    metrics: defined({latency_ms: ms, input_tokens: input, output_tokens: output}),
    failure: failed ? `codex ${error !== null ? `reported: ${error.slice(0, 200)}` : `exited ${code}`}` : null,
  };
}

export function hostReport(
  host: AgentHost,
  stdout: string,
  code: number | null,
  ms: number,
  lastMessage: string | null,
): HostReport {
  return host === 'claude-code' ? claudeReport(stdout, code, ms) : codexReport(stdout, code, ms, lastMessage);
}
