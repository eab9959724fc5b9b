import path from 'node:path';
import {jsonEqual} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {canTransition} from '../../../model/promotion/lifecycle.js';
import {
  entryDigest,
  sameButTimes,
  type RecordCause,
  type RecordHistoryEntry,
} from '../../../model/promotion/record-history.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import {readDocument} from '../../documents.js';
import {listDir} from '../../files/fs.js';
import {leftoverKind} from '../../paths.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {ensureAdoption, type AdoptionRead} from './history-adoption.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/** candidates/<digest>/record_history/<seq>.json: record.json as each change left it (autoctx addition). */
export const ENTRY_SCHEMA = 'record-history-entry' as const;
const ENTRY_FILE = /^\d{6}\.json$/;

/** The positions of a candidate's entries, ascending; other names are left to verify. */
export function listHistorySeqs(ctx: KindContext, digest: string): number[] {
  return seqsOf(listDir(ctx.guard, ctx.paths.recordHistoryDir(digest)));
}

function seqsOf(entries: ReturnType<typeof listDir>): number[] {
  return entries
    .filter((e) => e.isFile() && ENTRY_FILE.test(e.name))
    .map((e) => Number(e.name.slice(0, 6)))
    .sort((a, b) => a - b);
}

export function readHistoryEntry(ctx: KindContext, digest: string, seq: number): RecordHistoryEntry | null {
  return readDocument<RecordHistoryEntry>(
    ctx.guard,
    ctx.paths.recordHistoryEntry(digest, seq),
    ENTRY_SCHEMA,
    (value) => {
      const e = value as unknown as RecordHistoryEntry;
      if (e.seq !== seq) fail('DIGEST_MISMATCH', `entry says it is number ${e.seq} but is stored as number ${seq}`);
      if (e.bundle_digest !== digest || e.record.bundle_digest !== digest)
        fail(
          'DIGEST_MISMATCH',
          `entry names bundle ${e.bundle_digest === digest ? e.record.bundle_digest : e.bundle_digest} but ` +
            `lives under ${digest}`,
        );
      return e;
    },
  );
}

/** A candidate's whole history, oldest first (empty when it keeps none). */
export function readRecordHistory(ctx: KindContext, digest: string): RecordHistoryEntry[] {
  return listHistorySeqs(ctx, digest).flatMap((seq) => readHistoryEntry(ctx, digest, seq) ?? []);
}

function lastEntry(ctx: KindContext, digest: string): RecordHistoryEntry | null {
  const seq = listHistorySeqs(ctx, digest).at(-1);
  return seq === undefined ? null : readHistoryEntry(ctx, digest, seq);
}

/**
 * Before record.json changes: record the change as the next entry of its
 * history, and return the record to write. The entry is written first, so a
 * crash between the two leaves the history one step ahead of the record,
 * never behind it. A change the last entry already holds adds nothing; a
 * command run again after it was cut short between the two, reaching the
 * same record but for its times, completes the change the entry holds.
 */
export function recordChange(
  ctx: KindContext,
  record: CandidateRecord,
  current: CandidateRecord | null,
  cause: RecordCause,
): CandidateRecord {
  const digest = record.bundle_digest;
  ensureAdoption(ctx, record.updated_at);
  let last = lastEntry(ctx, digest);
  if (last && jsonEqual(last.record, record)) return record;
  if (last && !jsonEqual(last.record, current) && sameButTimes(last.record, record)) return last.record;
  // A record written without a history (before the scenario kept them) starts its history as it stands.
  if (last === null && current !== null) last = adoptRecord(ctx, current);
  const seq = (last?.seq ?? 0) + 1;
  const entry: RecordHistoryEntry = {
    schema_version: 1,
    bundle_digest: digest,
    seq,
    previous_entry_sha256: last ? entryDigest(last) : null,
    cause,
    record,
  };
  ctx.writer.createDocument(ctx.paths.recordHistoryEntry(digest, seq), ENTRY_SCHEMA, entry);
  return record;
}

/**
 * Where a record stands against its history: in step, one change behind it (a write cut short), differing, or with
 * none.
 */
export type HistoryState =
  | {kind: 'in-step' | 'none' | 'adoptable'}
  | {kind: 'behind' | 'differs'; entry: RecordHistoryEntry};

/**
 * The one rule verify, status and repair share. The record is one change
 * behind when it is the entry before the last, or, when the last is the
 * first, when there is no record yet and the entry is a proposal (a propose
 * or an init cut short before its record).
 */
function standing(
  last: RecordHistoryEntry,
  before: RecordHistoryEntry | null | undefined,
  record: CandidateRecord | null,
): HistoryState {
  if (jsonEqual(last.record, record)) return {kind: 'in-step'};
  const behind =
    last.seq === 1
      ? record === null && (last.cause === 'propose' || last.cause === 'init' || last.cause === 'rollover')
      : before != null && jsonEqual(before.record, record);
  return {kind: behind ? 'behind' : 'differs', entry: last};
}

export function historyState(
  ctx: KindContext,
  digest: string,
  record: CandidateRecord | null,
  adoption: AdoptionRead,
): HistoryState {
  const seqs = listHistorySeqs(ctx, digest);
  const last = seqs.length === 0 ? null : readHistoryEntry(ctx, digest, seqs.at(-1)!);
  const predating = adoption?.predating.has(digest) ?? false;
  if (last === null) return record !== null && adoption !== null && !predating ? {kind: 'adoptable'} : {kind: 'none'};
  const before = seqs.length >= 2 && seqs.at(-2) === last.seq - 1 ? readHistoryEntry(ctx, digest, last.seq - 1) : null;
  return standing(last, before, record);
}

/**
 * Take a record as it stands into its history, as the next entry: a record
 * that has none, before its next change; or, by repair after verify named
 * it, a record changed without its history (by another implementation, or
 * by hand).
 */
export function adoptRecord(ctx: KindContext, record: CandidateRecord): RecordHistoryEntry {
  const last = lastEntry(ctx, record.bundle_digest);
  const seq = (last?.seq ?? 0) + 1;
  const entry: RecordHistoryEntry = {
    schema_version: 1,
    bundle_digest: record.bundle_digest,
    seq,
    previous_entry_sha256: last ? entryDigest(last) : null,
    cause: 'adopt',
    record,
  };
  ctx.writer.createDocument(ctx.paths.recordHistoryEntry(record.bundle_digest, seq), ENTRY_SCHEMA, entry);
  return entry;
}

/**
 * verify: a candidate's history is entries 1…n, each stored under its own
 * number for this candidate, each naming the digest of the one before, each
 * a lifecycle step the lifecycle allows; and record.json is the last entry's
 * record, or the one before it (a change cut short after its entry, which
 * repair completes). A scenario that keeps histories has one for every
 * candidate it did not find without one. True when the candidate keeps one.
 */
export function verifyRecordHistory(
  c: Findings,
  digest: string,
  record: CandidateRecord | null | undefined,
  adoption: AdoptionRead | undefined,
): boolean {
  const {store} = c;
  const dir = store.paths.recordHistoryDir(digest);
  const recordFile = store.paths.record(digest);
  const names = listDir(store.guard, dir);
  for (const e of names) {
    // a crash's temporary file: the leftover check names it
    const leftover = leftoverKind(`${dir}/${e.name}`, e.isDirectory() ? 'dir' : 'file');
    if (leftover === null && (!e.isFile() || !ENTRY_FILE.test(e.name)))
      c.error(
        `${dir}/${e.name}`,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(dir)}/${e.name} is not an entry of a record history`,
      );
  }
  const seqs = seqsOf(names);
  if (seqs.length === 0) {
    if (record && adoption && !adoption.predating.has(digest)) {
      const first = store.paths.recordHistoryEntry(digest, 1);
      c.error(
        first,
        'MISSING_RECORD_HISTORY',
        `${c.rel(first)} is missing: ${c.rel(recordFile)} has no history, yet it is not among the ` +
          `candidates ${c.rel(store.paths.historyAdoption)} found without one (autoctx repair starts one ` +
          `from the record)`,
      );
    }
    return false;
  }
  // By position; a gap is one error however long it is (a hostile 999999.json costs one line, not a million).
  const entries = new Map<number, RecordHistoryEntry | undefined>();
  let expected = 1;
  for (const seq of seqs) {
    const file = store.paths.recordHistoryEntry(digest, seq);
    if (seq > expected) {
      const first = store.paths.recordHistoryEntry(digest, expected);
      c.error(
        first,
        'MISSING_RECORD_HISTORY',
        `${c.rel(first)}` +
          `${seq - 1 > expected ? ` to ${path.basename(store.paths.recordHistoryEntry(digest, seq - 1))}` : ''}` +
          ` missing from the history of ${digest}`,
      );
    }
    expected = seq + 1;
    const entry = c.attempt(file, () => readHistoryEntry(store, digest, seq)) ?? undefined;
    const before = entries.get(seq - 1);
    if (entry && seq === 1 && entry.previous_entry_sha256 !== null)
      c.error(file, 'RECORD_HISTORY_MISMATCH', `${c.rel(file)} is the first entry but names one before it`);
    if (entry && before && entry.previous_entry_sha256 !== entryDigest(before)) {
      // Either one was changed: the entry before, or the digest this one names.
      const prior = store.paths.recordHistoryEntry(digest, seq - 1);
      c.both(
        prior,
        file,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(prior)} is not the entry ${c.rel(file)} follows (its digest differs from previous_entry_sha256)`,
      );
    }
    if (
      entry &&
      before &&
      entry.record.lifecycle !== before.record.lifecycle &&
      !canTransition(before.record.lifecycle, entry.record.lifecycle)
    ) {
      c.error(
        file,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(file)}: ${before.record.lifecycle} → ${entry.record.lifecycle} is not a lifecycle step`,
      );
    }
    entries.set(seq, entry);
  }
  if (record === undefined) return true;
  const lastSeq = seqs.at(-1)!;
  const last = entries.get(lastSeq);
  if (!last) return true;
  const state = standing(last, entries.get(lastSeq - 1), record);
  const lastFile = c.rel(store.paths.recordHistoryEntry(digest, lastSeq));
  if (state.kind === 'behind') {
    c.warn(
      recordFile,
      'RECORD_HISTORY_PENDING',
      `${c.rel(recordFile)} is one change behind ${lastFile}: a write cut short after its history entry ` +
        `(autoctx repair completes it)`,
    );
  } else if (state.kind === 'differs' && record === null) {
    c.error(recordFile, 'MISSING_CANDIDATE', `${c.rel(recordFile)} is missing, but ${lastFile} records it`);
  } else if (state.kind === 'differs') {
    // The record or the last entry was changed without the other, or the entries after the last one left were lost.
    const next = lastSeq < 999999 ? store.paths.recordHistoryEntry(digest, lastSeq + 1) : null;
    const message =
      `${c.rel(recordFile)} is not the record ${lastFile} holds, nor the one before it: one of the two was ` +
      `changed without the other${next ? `, or ${c.rel(next)} and any after it were lost` : ''}`;
    for (const file of [recordFile, store.paths.recordHistoryEntry(digest, lastSeq), ...(next ? [next] : [])])
      c.error(file, 'RECORD_HISTORY_MISMATCH', message);
  }
  return true;
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    /** The candidate keeps a record history. */
    historyKept: boolean;
  }
}

export const recordHistoryCheck: CandidateCheck = {
  order: 200,
  candidate(c, digest, facts, scenario) {
    facts.historyKept = verifyRecordHistory(c, digest, facts.record, scenario.adoption);
  },
};
