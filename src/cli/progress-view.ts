import type {ProgressEvent} from '../core/evaluation/evaluate.js';

/**
 * What the live view shows, as plain lines (src/cli/live-view.ts draws them
 * with ink; tests read them directly): per lane what is recorded against what
 * the stopping rule can reach (not the planned units, most of which it may
 * never use), the mean labelled with the lane it is of, the decision, and the
 * elapsed time, the rate and what is left.
 */
const LANES = ['screen', 'confirmation', 'heldout'] as const;
type Lane = (typeof LANES)[number];
const LABEL: Record<Lane, string> = {screen: 'screen', confirmation: 'confirmation', heldout: 'held-out'};
const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '–' : x.toFixed(4));

/**
 * The lane a decision's mean is of: the screen's until the confirmation lane has its interval, the held-out lane's when
 * it decided against.
 */
export function meanLane(e: ProgressEvent): Lane | null {
  const d = e.decision;
  if (!d || d.mean_effect === null) return null;
  if (d.confidence_low === null) return 'screen';
  return d.decision === 'rejected' && d.reason.includes('held-out') ? 'heldout' : 'confirmation';
}

/** Whether the decision has moved past a lane (its pairs are all it will get). */
function past(e: ProgressEvent, lane: Lane): boolean {
  const d = e.decision?.decision;
  if (!d || d === 'needs_screen') return false;
  if (d === 'rejected' || d === 'inconclusive' || d === 'confirmed') return true;
  if (lane === 'screen') return true;
  return lane === 'confirmation' && d === 'needs_heldout';
}

function bar(done: number, max: number, width = 24): string {
  const filled = max === 0 ? 0 : Math.round((Math.min(done, max) / max) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

function laneLine(e: ProgressEvent, lane: Lane): string {
  const done = e.counts[lane];
  const {min, max} = e.reach[lane];
  const planned = e.planned[lane];
  const beyond = planned > max ? `, ${planned} planned` : '';
  if (past(e, lane))
    return (
      `${LABEL[lane].padEnd(13)} ${bar(done, done)} ${done} ` +
      `(done${done < max ? `; the rule stopped before ${max}` : ''}${beyond})`
    );
  const range = min === max ? `${max}` : `${min}–${max}`;
  return `${LABEL[lane].padEnd(13)} ${bar(done, max)} ${done} of ${range}${beyond}`;
}

function intervalLine(e: ProgressEvent): string {
  const d = e.decision;
  const lane = meanLane(e);
  if (!d || lane === null) return 'mean –';
  if (d.confidence_low === null || d.confidence_high === null)
    return `mean (${LABEL[lane]} lane) ${fmt(d.mean_effect)} against the minimum effect ${e.min_effect}`;
  const side = d.confidence_low > e.min_effect ? 'clears' : d.confidence_high <= e.min_effect ? 'is below' : 'overlaps';
  return (
    `mean (${LABEL[lane]} lane) ${fmt(d.mean_effect)}  interval [${fmt(d.confidence_low)}, ` +
    `${fmt(d.confidence_high)}] ${side} the minimum effect ${e.min_effect}`
  );
}

const seconds = (ms: number) =>
  ms < 10_000
    ? `${(ms / 1000).toFixed(1)} s`
    : ms < 600_000
      ? `${Math.round(ms / 1000)} s`
      : `${Math.round(ms / 60_000)} min`;

/** Pairs still to come: at least what each open lane's minimum needs, at most what the rule can reach. */
function left(e: ProgressEvent): {min: number; max: number} {
  let min = 0;
  let max = 0;
  for (const lane of LANES) {
    if (past(e, lane)) continue;
    min += Math.max(0, e.reach[lane].min - e.counts[lane]);
    max += Math.max(0, e.reach[lane].max - e.counts[lane]);
  }
  return {min, max};
}

/** The timing line: elapsed, the rate of this run's pairs, and an estimate of what is left. */
export function timingLine(e: ProgressEvent, startedAt: number, pairsAtStart: number, now: number): string {
  const elapsed = now - startedAt;
  const done = LANES.reduce((n, l) => n + e.counts[l], 0) - pairsAtStart;
  const rate = elapsed > 0 ? (done * 1000) / elapsed : 0;
  const rest = left(e);
  const estimate =
    rate > 0
      ? rest.min === rest.max
        ? `, about ${seconds((rest.max / rate) * 1000)}`
        : `, about ${seconds((rest.min / rate) * 1000)} to ${seconds((rest.max / rate) * 1000)}`
      : '';
  const pairs = rest.min === rest.max ? `${rest.max}` : `${rest.min}–${rest.max}`;
  return (
    `elapsed ${seconds(elapsed)} · ${rate.toFixed(1)} pairs/s · left: ${pairs} ` +
    `pair${rest.max === 1 ? '' : 's'}${e.type === 'done' ? '' : estimate}`
  );
}

export function viewLines(e: ProgressEvent, timing: {startedAt: number; pairsAtStart: number; now: number}): string[] {
  return [
    ...LANES.map((lane) => laneLine(e, lane)),
    intervalLine(e),
    `decision: ${e.decision?.decision ?? 'starting'}` +
      `${e.fixture ? `   (last: ${LABEL[e.lane!]} ${e.fixture}, seed ${e.seed})` : ''}`,
    timingLine(e, timing.startedAt, timing.pairsAtStart, timing.now),
  ];
}
