import path from 'node:path';
import {runCli} from './cli.js';
import {evalArgs, fakeEnv} from './pipeline.js';
import {writeSource} from './tree.js';

/**
 * Propose a bundle of these files in a scenario, confirm it with the fake evaluator and promote it; returns its digest.
 */
export async function promoteForTest(
  knowledge: string,
  scenario: string,
  files: Record<string, string>,
): Promise<string> {
  const dir = path.dirname(knowledge);
  const run = (args: string[], env?: NodeJS.ProcessEnv) => {
    const r = runCli([...args, '--knowledge', knowledge, '--scenario', scenario, '--json'], {env});
    if (r.status !== 0) throw new Error(`${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r.json;
  };
  const src = writeSource(path.join(dir, `promote-${Date.now()}-${Math.random().toString(16).slice(2)}`), files);
  const digest = run(['propose', '--from', src]).bundle_digest as string;
  run(['confirm', digest, ...evalArgs()], fakeEnv(dir));
  run(['promote', digest]);
  return digest;
}
