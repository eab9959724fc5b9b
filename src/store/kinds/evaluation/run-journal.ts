import fs from 'node:fs';
import {canonicalJson, parseJson} from '../../../canonical/index.js';
import {matchedTrialFromDict, type MatchedTrial} from '../../../model/evaluation/trial.js';
import {appendDurable, fsyncDir, type RootGuard} from '../../files/fs.js';
import path from 'node:path';
import {fail, isAutoctxError, rethrowUnless} from '../../../errors.js';
import {
  armObservationOf,
  armObservationProblem,
  type ArmObservation,
  type PairObservation,
} from '../../../model/evaluation/observations.js';

/**
 * The run journal, `.state/runs/<scenario>/<candidate>.jsonl`: the
 * pairs of one evaluation run not yet folded into the candidate's
 * matched-trials envelope. Each pair is appended as one line and flushed
 * before the next decision, so a pair costs the same however many came
 * before it; the run folds the journal into the envelope (then the seal, then
 * the record) at each lane boundary, at its end and when it resumes.
 *
 * Only the holder of the candidate's run lock writes or folds it. It is safe
 * to lose: what it holds is not evidence until folded, and a lost pair is
 * evaluated again. It is never trusted: a journal whose header is not this
 * plan's, or with a line that is not a whole trial, is set aside whole, and
 * folded trials go through every check an envelope does.
 *
 * A line is the trial itself, or, for a pair whose arms the evaluator
 * observed something of (metrics, artifacts), {"observation", "trial"}, so
 * that a resumed run records the observation with its trial. (A version of
 * autoctx that predates observations sets such a journal aside, and its
 * pairs are evaluated again.)
 */
export const JOURNAL_FORMAT = 'autoctx-run-journal';

export interface JournalHeader {
  format: typeof JOURNAL_FORMAT;
  version: 1;
  candidate_digest: string;
  plan_digest: string;
}

export interface JournalRead {
  /** The trials of every whole line, in the order appended. */
  trials: MatchedTrial[];
  /** What was observed of the pairs of those lines that carry an observation, by pair key. */
  observations: Map<string, PairObservation>;
  /** Why the journal cannot be used (then trials is empty), or null. */
  refused: string | null;
}

/** Read a journal: null when there is none. A last line without its newline (a write cut short) is not a pair. */
export function readJournal(guard: RootGuard, file: string, header: JournalHeader): JournalRead | null {
  guard.check(file);
  let text: string;
  try {
    const st = fs.lstatSync(file);
    if (!st.isFile())
      return {trials: [], observations: new Map(), refused: `${guard.relative(file)} is not a regular file`};
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a line cut short
  if (lines.length === 0) return {trials: [], observations: new Map(), refused: null};
  try {
    const head = parseJson(lines[0]!) as unknown as JournalHeader;
    if (canonicalJson(head) !== canonicalJson(header))
      return {trials: [], observations: new Map(), refused: 'its header is for another candidate or plan'};
    const observations = new Map<string, PairObservation>();
    const trials = lines.slice(1).map((line) => {
      const {trial, observation} = journalLine(parseJson(line));
      if (observation) observations.set(trial.pair_key, observation);
      return trial;
    });
    return {trials, observations, refused: null};
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    return {
      trials: [],
      observations: new Map(),
      refused: `a line is not a whole trial (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

function armOf(raw: unknown): ArmObservation {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) fail('INVALID_INPUT', 'an arm is not an object');
  const arm = raw as Record<string, unknown>;
  const unknown = Object.keys(arm).find((k) => k !== 'metrics' && k !== 'check_passed' && k !== 'artifacts');
  if (unknown !== undefined) fail('INVALID_INPUT', `an observation has an unknown key ${JSON.stringify(unknown)}`);
  const problem = armObservationProblem(arm);
  if (problem) fail('INVALID_INPUT', `an observation ${problem}`);
  return armObservationOf(arm);
}

/** One journal line: a trial, or a trial with what was observed of its arms. */
function journalLine(value: unknown): {trial: MatchedTrial; observation: PairObservation | null} {
  const v = value as Record<string, unknown> | null;
  if (v === null || typeof v !== 'object' || !('trial' in v))
    return {trial: matchedTrialFromDict(value), observation: null};
  const o = v.observation as Record<string, unknown> | null;
  if (Object.keys(v).length !== 2 || o === null || typeof o !== 'object' || Object.keys(o).length !== 2)
    fail('INVALID_INPUT', 'an observed pair is not {"observation": {"candidate", "incumbent"}, "trial"}');
  return {
    trial: matchedTrialFromDict(v.trial),
    observation: {candidate: armOf(o.candidate), incumbent: armOf(o.incumbent)},
  };
}

/** The journal of one run: appended pair by pair, removed once folded. */
export class RunJournal {
  private fd: number | null = null;

  constructor(
    private readonly guard: RootGuard,
    readonly file: string,
    private readonly header: JournalHeader,
    /** Makes the journal's folder (under the state area's lock). */
    private readonly makeFolder: () => Promise<unknown>,
  ) {}

  /** Before the first append: the folder exists. */
  async ready(): Promise<void> {
    if (this.fd === null) await this.makeFolder();
  }

  /** Append one pair, flushed before this returns; the first pair writes the header too (after ready()). */
  append(trial: MatchedTrial, observation: PairObservation | null = null): void {
    const line = `${canonicalJson(observation ? {observation, trial} : trial)}\n`;
    if (this.fd === null) {
      this.guard.check(this.file);
      this.fd = fs.openSync(
        this.file,
        fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW,
        0o600,
      );
      appendDurable(this.fd, this.file, `${canonicalJson(this.header)}\n${line}`);
      fsyncDir(path.dirname(this.file));
      return;
    }
    appendDurable(this.fd, this.file, line);
  }

  /** Remove the journal (its pairs were folded, or are not to be kept). */
  discard(): void {
    this.close();
    this.guard.check(this.file);
    try {
      fs.unlinkSync(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      return;
    }
    fsyncDir(path.dirname(this.file));
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
