import {canonicalJson} from '../canonical/index.js';
import {exitCodeForStatus} from '../errors.js';
import {claim, prepare, render} from '../core/delivery/bootstrap.js';
import {recall} from '../core/delivery/recall.js';
import {DEFAULT_LOCK_TIMEOUT_SECONDS} from '../core/common/defaults.js';
import {BOOTSTRAP_LIFECYCLES} from '../model/delivery/bootstrap-receipt.js';
import {errorEnvelope, toAutoctxError} from './error-output.js';

/**
 * The delivery commands a host or a script runs on every session, with
 * --json, without loading oclif: `bootstrap prepare|claim|render` and
 * `recall`. Only a command line it understands completely is taken here
 * (every flag known, every value of the shape oclif would accept); anything
 * else, --help included, returns null and goes to oclif, which gives the
 * same answers for the same input (test/cli/fast-path.test.ts holds the two
 * to that) and the one-line usage errors for the rest.
 */
type FlagKind = {type: 'string'; char?: string; check?: (v: string) => boolean} | {type: 'boolean'};

const store: Record<string, FlagKind> = {
  knowledge: {type: 'string', char: 'k'},
  scenario: {type: 'string', char: 's'},
  json: {type: 'boolean'},
};
const writing: Record<string, FlagKind> = {
  ...store,
  'lock-timeout': {type: 'string', check: (v) => /^\d+(\.\d+)?$/.test(v) && Number(v) <= 86_400 * 365},
};
const maxBytes: FlagKind = {type: 'string', check: (v) => /^\d{1,4}$/.test(v) && Number(v) >= 512 && Number(v) <= 8192};
const text: FlagKind = {type: 'string', check: (v) => v.length > 0 && !v.startsWith('-')};

interface Spec {
  flags: Record<string, FlagKind>;
  required: string[];
  args: number;
  run: (f: Record<string, string | boolean>, args: string[]) => Promise<{status: string}> | {status: string};
}

const num = (v: string | boolean | undefined) => (typeof v === 'string' ? Number(v) : undefined);
const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
const lock = (f: Record<string, string | boolean>) => num(f['lock-timeout']) ?? DEFAULT_LOCK_TIMEOUT_SECONDS;

const SPECS: Record<string, Spec> = {
  'bootstrap prepare': {
    flags: {
      ...writing,
      integration: text,
      lifecycle: {type: 'string', check: (v) => (BOOTSTRAP_LIFECYCLES as readonly string[]).includes(v)},
      enabled: {type: 'boolean'},
      'event-id': text,
      handoff: text,
      'max-bytes': maxBytes,
      user: text,
      session: text,
    },
    required: ['integration', 'lifecycle'],
    args: 0,
    run: (f) =>
      prepare({
        knowledge: str(f.knowledge),
        scenario: str(f.scenario),
        integration: str(f.integration)!,
        lifecycle: str(f.lifecycle)!,
        enabled: f.enabled === true,
        eventId: str(f['event-id']),
        handoff: str(f.handoff),
        maxBytes: num(f['max-bytes']),
        user: str(f.user),
        session: str(f.session),
        lockTimeout: lock(f),
      }),
  },
  'bootstrap claim': {
    flags: {...writing, outcome: {type: 'string', check: (v) => v === 'injected' || v === 'failed'}},
    required: ['outcome'],
    args: 1,
    run: (f, a) =>
      claim({
        knowledge: str(f.knowledge),
        scenario: str(f.scenario),
        receipt: a[0]!,
        outcome: str(f.outcome)!,
        lockTimeout: lock(f),
      }),
  },
  'bootstrap render': {
    flags: {...store, handoff: text, 'max-bytes': maxBytes, user: text, session: text},
    required: [],
    args: 0,
    run: (f) =>
      render({
        knowledge: str(f.knowledge),
        scenario: str(f.scenario),
        handoff: str(f.handoff),
        maxBytes: num(f['max-bytes']),
        user: str(f.user),
        session: str(f.session),
      }),
  },
  recall: {
    flags: {
      ...store,
      query: {type: 'string', char: 'q', check: (v) => v.length > 0},
      receipt: text,
      'max-bytes': maxBytes,
      user: text,
      session: text,
    },
    required: ['query'],
    args: 0,
    run: (f) =>
      recall({
        knowledge: str(f.knowledge),
        scenario: str(f.scenario),
        query: str(f.query)!,
        receipt: str(f.receipt),
        maxBytes: num(f['max-bytes']),
        user: str(f.user),
        session: str(f.session),
      }),
  },
};

/** The command, its flags and arguments, when this path understands the whole line; else null. */
export function parseFastPath(
  argv: readonly string[],
): {id: string; spec: Spec; flags: Record<string, string | boolean>; args: string[]} | null {
  const id = argv[0] === 'recall' ? 'recall' : argv[0] === 'bootstrap' ? `bootstrap ${argv[1] ?? ''}` : '';
  const spec = SPECS[id];
  if (!spec) return null;
  const flags: Record<string, string | boolean> = {};
  const args: string[] = [];
  const rest = argv.slice(id.split(' ').length);
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    let name: string | undefined;
    let value: string | undefined;
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      name = eq < 0 ? token.slice(2) : token.slice(2, eq);
      value = eq < 0 ? undefined : token.slice(eq + 1);
    } else if (/^-[a-z]$/.test(token)) {
      name = Object.entries(spec.flags).find(([, k]) => k.type === 'string' && k.char === token[1])?.[0];
      if (name === undefined) return null;
    } else if (!token.startsWith('-') && args.length < spec.args) {
      args.push(token);
      continue;
    } else return null;
    const kind = spec.flags[name];
    if (!kind || name in flags) return null;
    if (kind.type === 'boolean') {
      if (value !== undefined) return null;
      flags[name] = true;
      continue;
    }
    if (value === undefined) {
      if (i + 1 >= rest.length) return null;
      value = rest[++i]!;
    }
    if (kind.check && !kind.check(value)) return null;
    flags[name] = value;
  }
  if (flags.json !== true || args.length !== spec.args || spec.required.some((r) => !(r in flags))) return null;
  return {id, spec, flags, args};
}

/**
 * Run the command line here when it is one of these, with --json: print its
 * one JSON object and return the exit code. Null: not handled, use oclif.
 */
export async function runFastPath(argv: readonly string[]): Promise<number | null> {
  const parsed = parseFastPath(argv);
  if (!parsed) return null;
  // biome-ignore lint/plugin: the command's boundary: every error, a bug's too, becomes the error envelope
  try {
    const result = await parsed.spec.run(parsed.flags, parsed.args);
    process.stdout.write(`${canonicalJson(result)}\n`);
    return exitCodeForStatus(result.status, parsed.id);
  } catch (error) {
    const e = toAutoctxError(error);
    let text: string;
    // biome-ignore lint/plugin: the output of last resort: what canonical JSON refuses still prints as plain JSON
    try {
      text = canonicalJson(errorEnvelope(e));
    } catch {
      text = JSON.stringify(errorEnvelope(e));
    }
    process.stdout.write(`${text}\n`);
    return e.exitCode;
  }
}

export {runAgentFastPath} from './agent-fast-path.js';
