import {stableDigest, type JsonValue} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import type {ConfirmationPolicy} from './policy.js';
import {TRIAL_LANES, type TrialLane} from './trial.js';

/** One line of a fixtures file. */
export interface Fixture {
  fixture: string;
  initial_state: JsonValue;
  observation: JsonValue;
  lane?: TrialLane;
  fixture_digest: string;
}

/** The fixture digest: {initial_state, observation}, never the name, the lane or a seed. */
export function fixtureDigest(initialState: JsonValue, observation: JsonValue): string {
  return stableDigest({initial_state: initialState, observation});
}

/** Validate one parsed line of a fixtures file. */
export function fixtureFromJson(value: unknown, where: string): Fixture {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', `${where}: a fixture must be a JSON object`);
  const f = value as Record<string, unknown>;
  const extra = Object.keys(f).filter((k) => !['fixture', 'initial_state', 'observation', 'lane'].includes(k));
  if (extra.length) fail('SCHEMA_VIOLATION', `${where}: unexpected property "${extra[0]}"`);
  if (typeof f.fixture !== 'string' || f.fixture.trim() === '')
    fail('SCHEMA_VIOLATION', `${where}: "fixture" must be a non-blank name`);
  if (!('initial_state' in f)) fail('SCHEMA_VIOLATION', `${where}: missing "initial_state"`);
  if (!('observation' in f)) fail('SCHEMA_VIOLATION', `${where}: missing "observation"`);
  if (f.lane !== undefined && !(TRIAL_LANES as readonly unknown[]).includes(f.lane))
    fail('SCHEMA_VIOLATION', `${where}: "lane" must be one of ${TRIAL_LANES.join(', ')}`);
  const initial_state = f.initial_state as JsonValue;
  const observation = f.observation as JsonValue;
  return {
    fixture: f.fixture,
    initial_state,
    observation,
    ...(f.lane !== undefined ? {lane: f.lane as TrialLane} : {}),
    fixture_digest: fixtureDigest(initial_state, observation),
  };
}

/** One unit of work: a fixture and a seed in a lane, both arms to be evaluated. */
export interface PlanUnit {
  fixture: string;
  fixture_digest: string;
  seed: number;
  lane: TrialLane;
}

/**
 * The order in which a new plan draws lanes for fixtures that name none: by
 * the digest of the fixture with the plan's cohort, so each candidate is
 * screened on its own fixtures, not on the same first few every time.
 */
export function cohortDraw(cohort: string): (f: Fixture) => string {
  return (f) => stableDigest({screen_draw: cohort, fixture_digest: f.fixture_digest});
}

/**
 * Lanes for fixtures that name none, deterministically: in the order of
 * `drawKey` (fixture-digest order unless given; plans bound before the draw
 * by cohort keep that order), first what the screen lane still needs, then
 * the held-out lane (its minimum or a fifth of all fixtures, whichever is
 * more, less what it has), the rest confirmation. Identical fixtures (same
 * digest) are refused: they are one fixture, not two independent ones.
 */
export function assignLanes(
  fixtures: readonly Fixture[],
  policy: ConfirmationPolicy,
  drawKey: (f: Fixture) => string = (f) => f.fixture_digest,
): Array<Fixture & {lane: TrialLane}> {
  const seen = new Map<string, string>();
  for (const f of fixtures) {
    const other = seen.get(f.fixture_digest);
    if (other !== undefined)
      fail(
        'INVALID_INPUT',
        `fixtures "${other}" and "${f.fixture}" are identical (same initial state and observation); ` +
          `identical fixtures are not independent`,
      );
    seen.set(f.fixture_digest, f.fixture);
  }
  const names = new Set<string>();
  for (const f of fixtures) {
    if (names.has(f.fixture)) fail('INVALID_INPUT', `fixture name "${f.fixture}" is used twice`);
    names.add(f.fixture);
  }
  const count = (lane: TrialLane) => fixtures.filter((f) => f.lane === lane).length;
  const free = fixtures
    .filter((f) => f.lane === undefined)
    .map((f) => ({f, key: drawKey(f)}))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.f.fixture_digest < b.f.fixture_digest ? -1 : 1))
    .map(({f}) => f);
  const screenNeed = Math.max(0, policy.min_screen_pairs - count('screen'));
  const heldoutNeed = Math.max(
    0,
    Math.max(policy.min_heldout_pairs, Math.floor(fixtures.length / 5)) - count('heldout'),
  );
  const assigned = new Map<string, TrialLane>();
  free.forEach((f, i) =>
    assigned.set(
      f.fixture_digest,
      i < screenNeed ? 'screen' : i < screenNeed + heldoutNeed ? 'heldout' : 'confirmation',
    ),
  );
  return fixtures.map((f) => ({...f, lane: f.lane ?? assigned.get(f.fixture_digest)!}));
}

export const SEED_BASE = 50_000;

/**
 * Consecutive seeds for `total` units from a namespace derived from the
 * cohort, as the reference's live plan does: slots = ⌊(2^53 − 1 − base + 1)/T⌋,
 * start = base + (digest(namespace) mod slots)·T.
 */
export function seedStart(namespace: string, total: number): number {
  const slots = (2n ** 53n - 1n - BigInt(SEED_BASE) + 1n) / BigInt(Math.max(1, total));
  const h = BigInt(`0x${stableDigest({runtime_context_seed_namespace: namespace})}`);
  return Number(BigInt(SEED_BASE) + (h % slots) * BigInt(total));
}

/**
 * The most units one plan may hold: far more than any decision asks for
 * (the policy's lanes need tens to thousands), and small enough that the
 * plan is built, bound and checked in seconds and little memory.
 */
export const MAX_PLAN_UNITS = 100_000;

/** Refuse a plan too large to run (PLAN_TOO_LARGE, exit 2), from its size alone, before anything is built. */
export function checkPlanSize(fixtures: number, seedsPerFixture: number): void {
  const total = fixtures * seedsPerFixture;
  if (total > MAX_PLAN_UNITS)
    fail(
      'PLAN_TOO_LARGE',
      `the plan would hold ${total} units (${fixtures} fixtures × ${seedsPerFixture} seeds), over the ` +
        `limit of ${MAX_PLAN_UNITS}; use fewer seeds per fixture`,
    );
}

/**
 * The work units of a plan, in plan order: screen, confirmation, then
 * held-out; within a lane fixtures in digest order, each with its seeds
 * consecutively. With `spreadScreen` (new plans) the screen lane takes every
 * fixture's first seed before any second one, so a screen of n pairs sees n
 * fixtures (or all of them) rather than a few fixtures' seeds; seeds stay the
 * same numbers, only their order in the lane changes.
 */
export function planUnits(
  fixtures: ReadonlyArray<Fixture & {lane: TrialLane}>,
  seedsPerFixture: number,
  cohort: string,
  spreadScreen = false,
): PlanUnit[] {
  if (!Number.isSafeInteger(seedsPerFixture) || seedsPerFixture < 1)
    fail('USAGE', '--seeds-per-fixture must be a positive integer');
  checkPlanSize(fixtures.length, seedsPerFixture);
  const ordered = (['screen', 'confirmation', 'heldout'] as const).flatMap((lane) =>
    fixtures.filter((f) => f.lane === lane).sort((a, b) => (a.fixture_digest < b.fixture_digest ? -1 : 1)),
  );
  const total = ordered.length * seedsPerFixture;
  let seed = seedStart(cohort, total);
  const units: PlanUnit[] = [];
  for (const f of ordered)
    for (let k = 0; k < seedsPerFixture; k++)
      units.push({fixture: f.fixture, fixture_digest: f.fixture_digest, seed: seed++, lane: f.lane});
  if (!spreadScreen || seedsPerFixture === 1) return units;
  const screen = units.filter((u) => u.lane === 'screen');
  const spread = screen.map((u, i) => ({u, k: i % seedsPerFixture, i})).sort((a, b) => a.k - b.k || a.i - b.i);
  return [...spread.map(({u}) => u), ...units.slice(screen.length)];
}

/** Whether a bound plan's screen lane takes every fixture's first seed first (planUnits' spreadScreen). */
export function screenSpread(units: readonly PlanUnit[]): boolean {
  const screen = units.filter((u) => u.lane === 'screen');
  return screen.length < 2 || screen[0]!.fixture_digest !== screen[1]!.fixture_digest;
}

/** What each lane lacks for the policy to be able to decide, or null when the plan can. */
export function planDeficits(units: readonly PlanUnit[], policy: ConfirmationPolicy): string | null {
  const n = (lane: TrialLane) => units.filter((u) => u.lane === lane).length;
  const needs: Array<[TrialLane, number, number]> = [
    ['screen', policy.min_screen_pairs, n('screen')],
    ['confirmation', policy.max_confirmation_pairs, n('confirmation')],
    ['heldout', policy.min_heldout_pairs, n('heldout')],
  ];
  const short = needs
    .filter(([, need, have]) => have < need)
    .map(([lane, need, have]) => `${lane} lacks ${need - have} (needs ${need} units, has ${have})`);
  return short.length ? short.join('; ') : null;
}

/**
 * What to change so that a plan the policy cannot reach can: the fixtures it
 * would need (as many seeds each), the seeds per fixture its confirmation
 * fixtures would need, or the largest max_confirmation_pairs the plan holds.
 */
export function planRemedy(
  fixtures: ReadonlyArray<Fixture & {lane: TrialLane}>,
  seedsPerFixture: number,
  policy: ConfirmationPolicy,
): string {
  const s = seedsPerFixture;
  const count = (lane: TrialLane) => fixtures.filter((f) => f.lane === lane).length;
  const screenFixtures = Math.max(count('screen'), policy.min_screen_pairs);
  // With n fixtures (the added ones naming no lane): how many confirmation units the lane split gives.
  const confirmationUnits = (n: number) =>
    Math.max(0, n - screenFixtures - Math.max(count('heldout'), policy.min_heldout_pairs, Math.floor(n / 5))) * s;
  const ways: string[] = [];
  let n = fixtures.length;
  while (confirmationUnits(n) < policy.max_confirmation_pairs && n < fixtures.length + MAX_PLAN_UNITS) n++;
  if (n > fixtures.length) ways.push(`give at least ${n} fixtures (you gave ${fixtures.length})`);
  const confirmationFixtures = count('confirmation');
  if (confirmationFixtures > 0) {
    const seeds = Math.ceil(policy.max_confirmation_pairs / confirmationFixtures);
    if (seeds > s) ways.push(`--seeds-per-fixture ${seeds}`);
    const most = confirmationFixtures * s;
    if (most < policy.max_confirmation_pairs && most >= Math.max(2, policy.min_confirmation_pairs))
      ways.push(`a policy with "max_confirmation_pairs": ${most} (less power; see docs/choosing-a-policy.md)`);
  }
  return ways.length ? ways.join(', or ') : 'give more fixtures';
}
