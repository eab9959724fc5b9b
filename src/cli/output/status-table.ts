import type {CandidateStatus} from '../../core/common/status.js';
import {short} from '../style.js';

const fmt = (x: number | null) => (x === null ? '-' : x.toFixed(4));

/** The heads of status's candidate table, so that no two words of a row (a lifecycle, a decision) read as one. */
export const CANDIDATE_HEADS = [
  'CANDIDATE',
  'LIFECYCLE',
  'DECISION',
  'MEAN EFFECT',
  'INTERVAL',
  'PAIRS',
  'UPDATED (UTC)',
  'PROPOSED BECAUSE',
] as const;

/** One row per candidate, under a header row: cells in the order of CANDIDATE_HEADS. */
export function candidateRows(details: readonly CandidateStatus[]): string[][] {
  return [
    [...CANDIDATE_HEADS],
    ...details.map((c) => [
      short(c.bundle_digest),
      c.lifecycle,
      c.decision ?? 'not evaluated',
      fmt(c.mean_effect),
      c.confidence_low !== null && c.confidence_high !== null
        ? `[${fmt(c.confidence_low)}, ${fmt(c.confidence_high)}]`
        : '-',
      String(c.pairs),
      c.updated_at.slice(0, 16).replace('T', ' '),
      c.proposal_rationale || '-',
    ]),
  ];
}

/** Rows as lines, each column as wide as its widest cell, two spaces apart (the last column is not padded). */
export function alignRows(rows: readonly string[][], indent = ''): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - [...cell].length)))
        .join('  ')
        .trimEnd(),
  );
}

/**
 * A line cut to a terminal's width, its last character an ellipsis; unchanged when it fits or when the width is
 * unknown (not a terminal: a pipe or a file gets the whole text).
 */
export function fitWidth(line: string, width: number | undefined): string {
  const chars = [...line];
  if (width === undefined || width <= 0 || chars.length <= width) return line;
  return `${chars.slice(0, Math.max(0, width - 1)).join('')}…`;
}
