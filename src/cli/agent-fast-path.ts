import {createInterface} from 'node:readline';
import {serveAgent, serveUnits, taskTreeDigest} from '../core/evaluation/agent/serve.js';
import {toAutoctxError} from './error-output.js';

/**
 * `autoctx evaluator agent` without oclif: autoctx starts it once per arm (per-arm mode) or per worker, so its start
 * is paid per trial. Only a command line it understands completely is run here (every flag known, each value of the
 * shape oclif would accept); anything else (--help, a value to refuse) returns null and goes to oclif, which runs
 * the same core and prints the same error line (test/cli/fast-path.test.ts holds the two to that).
 */
const STRINGS = ['host', 'tasks', 'host-bin', 'host-arg', 'trial-timeout', 'model', 'knowledge', 'tree-digest'];
const BOOLEANS = ['keep-workspaces', 'units'];

function parse(argv: readonly string[]): Record<string, string | string[] | boolean> | null {
  if (argv[0] !== 'evaluator' || argv[1] !== 'agent') return null;
  const flags: Record<string, string | string[] | boolean> = {};
  const rest = argv.slice(2);
  for (let i = 0; i < rest.length; i++) {
    const token = rest[i]!;
    const eq = token.indexOf('=');
    const name = token.startsWith('--')
      ? eq < 0
        ? token.slice(2)
        : token.slice(2, eq)
      : token === '-k'
        ? 'knowledge'
        : '';
    let value: string | undefined = token.startsWith('--') && eq >= 0 ? token.slice(eq + 1) : undefined;
    if (BOOLEANS.includes(name)) {
      if (value !== undefined || name in flags) return null;
      flags[name] = true;
      continue;
    }
    if (!STRINGS.includes(name) || (name in flags && name !== 'host-arg')) return null;
    if (value === undefined) {
      if (i + 1 >= rest.length) return null;
      value = rest[++i]!;
    }
    // What oclif would refuse, or read otherwise, is left to it.
    if (value.trim() === '' || (value.startsWith('-') && (name !== 'host-arg' || !token.includes('=')))) return null;
    if (name === 'host' && value !== 'claude-code' && value !== 'codex') return null;
    if (name === 'trial-timeout' && !(/^\d+(\.\d+)?$/.test(value) && Number(value) > 0)) return null;
    if (name === 'host-arg') flags[name] = [...((flags[name] as string[] | undefined) ?? []), value];
    else flags[name] = value;
  }
  const digestOnly = 'tree-digest' in flags;
  if (digestOnly ? Object.keys(flags).length !== 1 : !('host' in flags && 'tasks' in flags)) return null;
  return flags;
}

/** Run the command line here when it is one this path understands: its exit code; null: use oclif. */
export async function runAgentFastPath(argv: readonly string[]): Promise<number | null> {
  const f = parse(argv);
  if (f === null) return null;
  const str = (name: string) => f[name] as string | undefined;
  // biome-ignore lint/plugin: the command's boundary: every error, a bug's too, becomes its one line and exit code
  try {
    if (str('tree-digest') !== undefined) {
      process.stdout.write(`${taskTreeDigest(str('tree-digest')!).tree_digest}\n`);
      return 0;
    }
    const lines = createInterface({input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY});
    await (f.units === true ? serveUnits : serveAgent)(
      {
        host: str('host')!,
        tasks: str('tasks')!,
        hostBin: str('host-bin'),
        hostArgs: f['host-arg'] as string[] | undefined,
        trialTimeoutSeconds: str('trial-timeout') === undefined ? undefined : Number(str('trial-timeout')),
        model: str('model'),
        keepWorkspaces: f['keep-workspaces'] === true,
        knowledge: str('knowledge'),
      },
      lines,
      (line) => process.stdout.write(line),
      (line) => process.stderr.write(`${line}\n`),
    );
    return 0;
  } catch (error) {
    const e = toAutoctxError(error);
    process.stderr.write(`error ${e.code}: ${e.message}\n`);
    return e.exitCode;
  } finally {
    // An error ends the evaluator at once, even while autoctx keeps its stdin open (persistent mode).
    process.stdin.destroy();
  }
}
