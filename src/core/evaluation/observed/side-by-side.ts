import type {PairObservation} from '../../../model/evaluation/observations.js';
import type {MatchedTrial} from '../../../model/evaluation/trial.js';
import {readArtifact} from '../../../store/files/artifacts.js';

/** How many pairs with the largest score difference the report shows side by side (beside every failed check). */
export const LARGEST_DIFFERENCES = 5;
/** The most characters of one artifact the report shows (the rest is in its file, which the report names). */
export const SHOWN_CHARS = 64 * 1024;

/** One artifact of one arm as the report shows it. */
export interface ShownArtifact {
  name: string;
  /** null: this arm kept no artifact of this name. */
  digest: string | null;
  kept: boolean;
  /** The text (up to SHOWN_CHARS), or why it is not shown. */
  text: string | null;
  why: string | null;
  /** Characters not shown (0: the whole text). */
  cut: number;
}

export interface ShownArm {
  score: number;
  check_passed: boolean | null;
  artifacts: ShownArtifact[];
}

/** One pair shown side by side, and why it was chosen. */
export interface SideBySide {
  lane: MatchedTrial['lane'];
  fixture: string;
  seed: number;
  pair_key: string;
  /** Candidate score minus incumbent score. */
  difference: number;
  reasons: Array<'largest difference' | 'check failed'>;
  candidate: ShownArm;
  incumbent: ShownArm;
}

function shownArm(
  score: number,
  o: PairObservation['candidate'] | undefined,
  names: readonly string[],
  artifactDir: string,
): ShownArm {
  return {
    score,
    check_passed: o?.check_passed ?? null,
    artifacts: names.map((name) => {
      const digest = o?.artifacts?.[name] ?? null;
      if (digest === null) return {name, digest, kept: false, text: null, why: 'not recorded for this arm', cut: 0};
      const read = readArtifact(artifactDir, digest);
      if (!read.kept) return {name, digest, kept: false, text: null, why: read.why, cut: 0};
      let text = read.text.slice(0, SHOWN_CHARS);
      if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1); // never half a character
      return {name, digest, kept: true, text, why: null, cut: read.text.length - text.length};
    }),
  };
}

/**
 * The pairs the report shows side by side: the LARGEST_DIFFERENCES pairs
 * with the largest |candidate − incumbent| score difference (the earlier in
 * `trials`' order on a tie), then every other pair where an arm's checker
 * failed, in `trials`' order; each with both arms' artifacts read from
 * `artifactDir` ("not kept" for a file that is gone). None when no pair
 * observed anything.
 */
export function sideBySide(
  trials: readonly MatchedTrial[],
  observations: ReadonlyMap<string, PairObservation> | null,
  artifactDir: string,
): SideBySide[] {
  if (!observations || !trials.some((t) => observations.has(t.pair_key))) return [];
  const diff = (t: MatchedTrial) => t.candidate_score - t.incumbent_score;
  const largest = trials
    .map((t, i) => ({t, i}))
    .sort((a, b) => Math.abs(diff(b.t)) - Math.abs(diff(a.t)) || a.i - b.i)
    .slice(0, LARGEST_DIFFERENCES)
    .map(({t}) => t);
  const failed = (t: MatchedTrial) => {
    const o = observations.get(t.pair_key);
    return o?.candidate.check_passed === false || o?.incumbent.check_passed === false;
  };
  const chosen = [...largest, ...trials.filter((t) => failed(t) && !largest.includes(t))];
  return chosen.map((t) => {
    const o = observations.get(t.pair_key);
    const names = [
      ...new Set([...Object.keys(o?.candidate.artifacts ?? {}), ...Object.keys(o?.incumbent.artifacts ?? {})]),
    ].sort();
    const reasons: SideBySide['reasons'] = [];
    if (largest.includes(t)) reasons.push('largest difference');
    if (failed(t)) reasons.push('check failed');
    return {
      lane: t.lane,
      fixture: t.fixture,
      seed: t.seed,
      pair_key: t.pair_key,
      difference: diff(t),
      reasons,
      candidate: shownArm(t.candidate_score, o?.candidate, names, artifactDir),
      incumbent: shownArm(t.incumbent_score, o?.incumbent, names, artifactDir),
    };
  });
}
