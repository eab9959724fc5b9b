import {sha256Hex, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';

export const TRIAL_LANES = ['screen', 'confirmation', 'heldout'] as const;
export type TrialLane = (typeof TRIAL_LANES)[number];

/** One matched pair: both arms of one fixture, seed, cohort and evaluator epoch. */
export interface MatchedTrial {
  candidate_digest: string;
  incumbent_digest: string | null;
  evaluator_epoch: string;
  cohort: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  lane: TrialLane;
  candidate_score: number;
  incumbent_score: number;
  candidate_valid: boolean;
  incumbent_valid: boolean;
  pair_key: string;
}

export type MatchedTrialInput = Omit<MatchedTrial, 'pair_key' | 'candidate_valid' | 'incumbent_valid'> & {
  candidate_valid?: boolean;
  incumbent_valid?: boolean;
};

/** Recently encoded strings: trials repeat the same digests, cohorts and epochs thousands of times. */
const encoded = new Map<string, string>();

export function jsonString(value: string, what: string): string {
  const hit = encoded.get(value);
  if (hit !== undefined) return hit;
  if (typeof value !== 'string' || !value.isWellFormed())
    fail('INVALID_INPUT', `matched trial ${what} must be a well-formed string`);
  const json = JSON.stringify(value);
  if (encoded.size >= 256) encoded.clear();
  encoded.set(value, json);
  return json;
}

/**
 * Identity of a matched pair: the digest of {cohort, evaluator_epoch,
 * fixture_digest, seed}. Lane and display name are deliberately left out, so
 * relabeling a pair cannot make it count twice. Built directly in canonical
 * form (keys already sorted) because the decision hashes every pair.
 */
export function matchedTrialPairKey(t: {
  evaluator_epoch: string;
  cohort: string;
  fixture_digest: string;
  seed: number;
}): string {
  if (typeof t.seed !== 'number' || !Number.isSafeInteger(t.seed))
    fail('INVALID_INPUT', 'matched trial seed must be a safe integer');
  return sha256Hex(
    `{"cohort":${jsonString(t.cohort, 'cohort')},"evaluator_epoch":` +
      `${jsonString(t.evaluator_epoch, 'evaluator_epoch')},"fixture_digest":` +
      `${jsonString(t.fixture_digest, 'fixture_digest')},"seed":${JSON.stringify(t.seed)}}`,
  );
}

/** The pair key schema-1 rows used, which included lane and display name. */
export function legacyPairKey(t: {
  evaluator_epoch: string;
  cohort: string;
  fixture: string;
  fixture_digest: string;
  seed: number;
  lane: string;
}): string {
  return stableDigest({
    cohort: t.cohort,
    evaluator_epoch: t.evaluator_epoch,
    fixture: t.fixture,
    fixture_digest: t.fixture_digest,
    lane: t.lane,
    seed: t.seed,
  });
}

/** Build a trial, computing its pair key; validity defaults to true. */
export function createMatchedTrial(input: MatchedTrialInput): MatchedTrial {
  const trial = {
    ...input,
    candidate_valid: input.candidate_valid ?? true,
    incumbent_valid: input.incumbent_valid ?? true,
  } as MatchedTrial;
  trial.pair_key = matchedTrialPairKey(trial);
  return trial;
}

const TRIAL_KEYS = [
  'candidate_digest',
  'incumbent_digest',
  'evaluator_epoch',
  'cohort',
  'fixture',
  'fixture_digest',
  'seed',
  'lane',
  'candidate_score',
  'incumbent_score',
  'candidate_valid',
  'incumbent_valid',
  'pair_key',
];

/**
 * The strict raw loader: a seed must be an integer (not a bool, not a float),
 * scores finite numbers (not bools, strings or null), validity flags booleans
 * (default true), digests and labels strings; the stored pair_key must equal
 * the current key, or for schema-1 rows the legacy key.
 */
export function matchedTrialFromDict(raw: unknown, options: {allowLegacyKey?: boolean} = {}): MatchedTrial {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    fail('INVALID_INPUT', 'a matched trial must be an object');
  const r = raw as Record<string, unknown>;
  const extra = Object.keys(r).filter((k) => !TRIAL_KEYS.includes(k));
  if (extra.length > 0) fail('INVALID_INPUT', `matched trial has unexpected keys: ${extra.join(', ')}`);
  for (const k of ['candidate_digest', 'evaluator_epoch', 'cohort', 'fixture', 'fixture_digest', 'pair_key']) {
    if (typeof r[k] !== 'string') fail('INVALID_INPUT', `matched trial ${k} must be a string`);
  }
  if (r.incumbent_digest !== null && typeof r.incumbent_digest !== 'string')
    fail('INVALID_INPUT', 'matched trial incumbent_digest must be a string or null');
  if (typeof r.seed !== 'number' || !Number.isSafeInteger(r.seed))
    fail('INVALID_INPUT', 'matched trial seed must be an integer in the safe range');
  for (const k of ['candidate_score', 'incumbent_score']) {
    if (typeof r[k] !== 'number' || !Number.isFinite(r[k]))
      fail('INVALID_INPUT', `matched trial ${k} must be a finite number`);
  }
  for (const k of ['candidate_valid', 'incumbent_valid']) {
    if (r[k] !== undefined && typeof r[k] !== 'boolean') fail('INVALID_INPUT', `matched trial ${k} must be a boolean`);
  }
  if (!(TRIAL_LANES as readonly unknown[]).includes(r.lane))
    fail('INVALID_INPUT', `matched trial lane must be one of ${TRIAL_LANES.join(', ')}`);
  const trial = createMatchedTrial(r as unknown as MatchedTrialInput);
  if (r.pair_key !== trial.pair_key) {
    const legacy = options.allowLegacyKey && r.pair_key === legacyPairKey(trial);
    if (!legacy) fail('DIGEST_MISMATCH', `matched trial pair_key ${String(r.pair_key)} does not match its identity`);
  }
  return trial;
}

export function jsonNumber(value: number, what: string): string {
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (Number.isInteger(value) && !Number.isSafeInteger(value))
  ) {
    fail('INVALID_INPUT', `matched trial ${what} must be a finite number in the safe range`);
  }
  return JSON.stringify(value);
}

/**
 * The canonical JSON of a trial's 13 fields, with the given pair key: equal to
 * canonicalJson of the same object, written directly because evidence digests
 * hash thousands of trials.
 */
export function canonicalTrialJson(t: MatchedTrial, pairKey: string): string {
  if (typeof t.candidate_valid !== 'boolean' || typeof t.incumbent_valid !== 'boolean')
    fail('INVALID_INPUT', 'matched trial validity flags must be booleans');
  return (
    `{"candidate_digest":${jsonString(t.candidate_digest, 'candidate_digest')},"candidate_score":` +
    `${jsonNumber(t.candidate_score, 'candidate_score')},` +
    `"candidate_valid":${t.candidate_valid},"cohort":${jsonString(t.cohort, 'cohort')},"evaluator_epoch":` +
    `${jsonString(t.evaluator_epoch, 'evaluator_epoch')},` +
    `"fixture":${jsonString(t.fixture, 'fixture')},"fixture_digest":` +
    `${jsonString(t.fixture_digest, 'fixture_digest')},` +
    `"incumbent_digest":` +
    `${t.incumbent_digest === null ? 'null' : jsonString(t.incumbent_digest, 'incumbent_digest')},"incumb` +
    `ent_score":${jsonNumber(t.incumbent_score, 'incumbent_score')},` +
    `"incumbent_valid":${t.incumbent_valid},"lane":${jsonString(t.lane, 'lane')},"pair_key":` +
    `${jsonString(pairKey, 'pair_key')},"seed":${jsonNumber(t.seed, 'seed')}}`
  );
}

/** The digest of one trial as recorded, for the evidence seal: every field, scores included. */
export function trialSealDigest(t: MatchedTrial): string {
  return sha256Hex(canonicalTrialJson(t, t.pair_key));
}

/** The evidence seal of a candidate: each recorded pair key with the digest of its trial. */
export function evidenceSeal(
  candidateDigest: string,
  trials: readonly MatchedTrial[],
  planBinding: string | null = null,
  /** How each trial's digest is had (a run passes one that remembers the trials it sealed before). */
  digestOf: (t: MatchedTrial) => string = trialSealDigest,
): {schema_version: 1; candidate_digest: string; trial_digests: Record<string, string>; plan_binding_digest?: string} {
  const trialDigests: Record<string, string> = {};
  for (const t of [...trials].sort((a, b) => (a.pair_key < b.pair_key ? -1 : a.pair_key > b.pair_key ? 1 : 0)))
    trialDigests[t.pair_key] = digestOf(t);
  return {
    schema_version: 1,
    candidate_digest: candidateDigest,
    ...(planBinding !== null ? {plan_binding_digest: planBinding} : {}),
    trial_digests: trialDigests,
  };
}

/**
 * How evidence stands against its seal: indexes of trials that differ, sealed pair keys that are gone, trials not
 * sealed yet.
 */
export interface SealComparison {
  changed: number[];
  missing: string[];
  unsealed: number;
}

export function compareWithSeal(
  seal: Readonly<Record<string, string>>,
  trials: readonly MatchedTrial[],
): SealComparison {
  const present = new Set<string>();
  const result: SealComparison = {changed: [], missing: [], unsealed: 0};
  trials.forEach((t, i) => {
    present.add(t.pair_key);
    const sealed = seal[t.pair_key];
    if (sealed === undefined) result.unsealed++;
    else if (sealed !== trialSealDigest(t)) result.changed.push(i);
  });
  result.missing = Object.keys(seal).filter((k) => !present.has(k));
  return result;
}

/** The order of an evidence envelope: by lane (as a string), then pair key. */
export function sortEvidence<T extends {lane: string; pair_key: string}>(trials: readonly T[]): T[] {
  return [...trials].sort((a, b) =>
    a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : a.pair_key < b.pair_key ? -1 : a.pair_key > b.pair_key ? 1 : 0,
  );
}

export function trialDelta(t: {candidate_score: number; incumbent_score: number}): number {
  return t.candidate_score - t.incumbent_score;
}

/**
 * Why a score cannot be recorded, or null: it must be finite, and a whole
 * number must be a safe integer (canonical JSON refuses others, so a trial
 * holding one could be written but never read back). Every double of
 * magnitude 2^53 or more is a whole number, so this also bounds a score's
 * size far below where the statistics could overflow.
 */
export function scoreProblem(score: unknown): string | null {
  if (typeof score !== 'number' || !Number.isFinite(score)) return 'is not a finite number';
  if (Number.isInteger(score) && !Number.isSafeInteger(score))
    return (
      `is ${score}, beyond the integers canonical JSON can hold (±${Number.MAX_SAFE_INTEGER}): it could be ` +
      `written but never read back`
    );
  return null;
}
