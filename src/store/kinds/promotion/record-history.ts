import {jsonEqual} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {canTransition} from '../../../model/promotion/lifecycle.js';
import {
  entryDigest,
  RECORD_CAUSES,
  sameButTimes,
  type RecordCause,
  type RecordHistoryEntry,
} from '../../../model/promotion/record-history.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import {readDocument} from '../../documents.js';
import {exists, listDir} from '../../files/fs.js';
import {historyKeyOf, isHistoryEntryName, type HistoryKey} from '../../layout/history-names.js';
import {
  forkMessage,
  forkProblem,
  listEntryNames,
  seqNamedEntries,
  shapeOf,
  type ChainShape,
  type Linked,
  type SeqNamed,
} from '../common/entry-chain.js';
import {leftoverKind} from '../../paths.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {ensureAdoption, type AdoptionRead} from './history-adoption.js';
import type {CandidateCheck} from '../common/kind-steps.js';

/**
 * candidates/<digest>/record_history/<sha256>.json: record.json as each change left it (autoctx addition), each entry
 * named by its own digest (the one the entry after it names); `<seq>.json`, the names earlier versions gave, are read
 * as they are.
 */
export const ENTRY_SCHEMA = 'record-history-entry' as const;

type Entry = Linked<RecordHistoryEntry>;

export function readHistoryEntry(ctx: KindContext, digest: string, key: HistoryKey): RecordHistoryEntry | null {
  return readDocument<RecordHistoryEntry>(
    ctx.guard,
    ctx.paths.recordHistoryEntry(digest, key),
    ENTRY_SCHEMA,
    (value) => {
      const e = value as unknown as RecordHistoryEntry;
      if (typeof key === 'number' && e.seq !== key)
        fail('DIGEST_MISMATCH', `entry says it is number ${e.seq} but is stored as number ${key}`);
      if (typeof key === 'string' && entryDigest(e) !== key)
        fail('DIGEST_MISMATCH', 'entry is not named by its own digest (its content changed, or it was renamed)');
      if (e.bundle_digest !== digest || e.record.bundle_digest !== digest)
        fail(
          'DIGEST_MISMATCH',
          `entry names bundle ${e.bundle_digest === digest ? e.record.bundle_digest : e.bundle_digest} ` +
            `but lives under ${digest}`,
        );
      return e;
    },
  );
}

/** An entry readHistoryEntry returned: one named by a digest hashes to it (checked there), not hashed again. */
function linked(name: string, key: HistoryKey, e: RecordHistoryEntry): Entry {
  const digest = typeof key === 'string' ? key : entryDigest(e);
  return {name, key, value: e, digest, previous: e.previous_entry_sha256};
}

/** A candidate's history as its links make it (an unreadable entry throws). */
export function historyShape(ctx: KindContext, digest: string): ChainShape<RecordHistoryEntry> {
  const dir = ctx.paths.recordHistoryDir(digest);
  return shapeOf(
    listEntryNames(ctx.guard, dir).flatMap((name) => {
      const key = historyKeyOf(name);
      const e = readHistoryEntry(ctx, digest, key);
      return e ? [linked(name, key, e)] : [];
    }),
  );
}

/** The file an entry is stored in: its digest's name, or the position an earlier version named it by. */
export function historyEntryFile(ctx: KindContext, entry: RecordHistoryEntry): string {
  const named = ctx.paths.recordHistoryEntry(entry.bundle_digest, entryDigest(entry));
  return exists(named) ? named : ctx.paths.recordHistoryEntry(entry.bundle_digest, entry.seq);
}

/** A candidate's entries stored under their positions, as earlier versions named them (repair renames them). */
export function seqNamedHistory(ctx: KindContext, digest: string): SeqNamed[] {
  return seqNamedEntries(
    ctx.guard,
    ctx.paths.recordHistoryDir(digest),
    (key) => ctx.paths.recordHistoryEntry(digest, key),
    (seq) => readHistoryEntry(ctx, digest, seq),
    entryDigest,
  );
}

/** A candidate's whole history, oldest first, in the order its links give (empty when it keeps none). */
export function readRecordHistory(ctx: KindContext, digest: string): RecordHistoryEntry[] {
  return historyShape(ctx, digest).line.map((e) => e.value);
}

/** The newest entry: the end of the line, or (after a lost entry) the newest of what follows the gap. */
function tipOf(shape: ChainShape<RecordHistoryEntry>): Entry | null {
  return (
    shape.detached.reduce<Entry | null>((a, b) => (a && a.value.seq >= b.value.seq ? a : b), null) ??
    shape.line.at(-1) ??
    null
  );
}

function lastEntry(ctx: KindContext, digest: string): RecordHistoryEntry | null {
  const shape = historyShape(ctx, digest);
  const fork = forkProblem(shape, (n) => ctx.guard.relative(`${ctx.paths.recordHistoryDir(digest)}/${n}`));
  if (fork) fail('INTEGRITY', fork, {file: ctx.guard.relative(ctx.paths.recordHistoryDir(digest))});
  return tipOf(shape)?.value ?? null;
}

/**
 * Before record.json changes: record the change as the next entry of its history, and return the record to write.
 * The entry is written first, so a crash between the two leaves the history one step ahead of the record, never
 * behind it. A change the last entry already holds adds nothing; a command run again after it was cut short between
 * the two, reaching the same record but for its times, completes the change the entry holds.
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
  ctx.writer.createDocument(ctx.paths.recordHistoryEntry(digest, entryDigest(entry)), ENTRY_SCHEMA, entry);
  return record;
}

/** Where a record stands against its history: in step, one change behind (a write cut short), differing, or none. */
export type HistoryState =
  | {kind: 'in-step' | 'none' | 'adoptable' | 'forked'}
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
  const shape = historyShape(ctx, digest);
  // Two clones' changes merged: nothing is completed or adopted across it (a person's to settle).
  if (shape.forks.length > 0) return {kind: 'forked'};
  const last = tipOf(shape)?.value ?? null;
  const predating = adoption?.predating.has(digest) ?? false;
  if (last === null) return record !== null && adoption !== null && !predating ? {kind: 'adoptable'} : {kind: 'none'};
  const before = last.previous_entry_sha256 === null ? null : shape.line.at(-2)?.value;
  return standing(last, shape.detached.length === 0 ? before : null, record);
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
  ctx.writer.createDocument(
    ctx.paths.recordHistoryEntry(record.bundle_digest, entryDigest(entry)),
    ENTRY_SCHEMA,
    entry,
  );
  return entry;
}

/**
 * The files an entry lost after `previous` would have: one per cause (the entry is the record as it stands, after
 * `previous`), since nothing else names it.
 */
function lostEntryFiles(
  ctx: KindContext,
  digest: string,
  previous: RecordHistoryEntry | null,
  record: CandidateRecord,
  legacy: boolean,
): string[] {
  const seq = (previous?.seq ?? 0) + 1;
  if (legacy) return seq <= 999999 ? [ctx.paths.recordHistoryEntry(digest, seq)] : [];
  const prior = previous ? entryDigest(previous) : null;
  return RECORD_CAUSES.map((cause) =>
    ctx.paths.recordHistoryEntry(
      digest,
      entryDigest({schema_version: 1, bundle_digest: digest, seq, previous_entry_sha256: prior, cause, record}),
    ),
  );
}

/**
 * verify: a candidate's history is one line of entries from its first, each
 * named by its own digest (or by its position, as earlier versions named
 * them), each naming the digest of the one before and numbered by its place
 * on the line, each a lifecycle step the lifecycle allows; two entries that
 * follow the same one are a fork (DIVERGED: what a merge of two clones
 * leaves). record.json is the last entry's record, or the one before it (a
 * change cut short after its entry, which repair completes). A scenario that
 * keeps histories has one for every candidate it did not find without one.
 * True when the candidate keeps one.
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
  const listed: string[] = [];
  for (const e of listDir(store.guard, dir)) {
    if (e.isFile() && isHistoryEntryName(e.name)) listed.push(e.name);
    // a crash's temporary file: the leftover check names it
    else if (leftoverKind(`${dir}/${e.name}`, e.isDirectory() ? 'dir' : 'file') === null)
      c.error(
        `${dir}/${e.name}`,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(dir)}/${e.name} is not an entry of a record history`,
      );
  }
  const fileOf = (name: string) => `${dir}/${name}`;
  if (listed.length === 0) {
    if (record && adoption && !adoption.predating.has(digest)) {
      const lost = lostEntryFiles(store, digest, null, record, false);
      c.error(
        dir,
        'MISSING_RECORD_HISTORY',
        `${c.rel(dir)} holds no entry (${lost.map((f) => c.rel(f)).join(' or ')} ` +
          `is missing): ${c.rel(recordFile)} has no history, yet it is not among the ` +
          `candidates ${c.rel(store.paths.historyAdoption)} found without one ` +
          `(autoctx repair starts one from the record)`,
      );
    }
    return false;
  }
  const stored: Entry[] = [];
  for (const name of listed.sort()) {
    const key = historyKeyOf(name);
    const e = c.attempt(fileOf(name), () => readHistoryEntry(store, digest, key));
    if (e) stored.push(linked(name, key, e));
  }
  const shape = shapeOf(stored);
  for (const fork of shape.forks) {
    const before = stored.find((e) => e.digest === fork[0]!.previous);
    const message = forkMessage(
      fork.map((e) => c.rel(fileOf(e.name))),
      `the record history of ${digest}`,
      before ? c.rel(fileOf(before.name)) : 'no entry (each is a first entry)',
    );
    for (const e of fork) c.error(fileOf(e.name), 'DIVERGED', message);
  }
  const checkStep = (before: RecordHistoryEntry, entry: Entry) => {
    const file = fileOf(entry.name);
    if (entry.value.seq !== before.seq + 1)
      c.error(
        file,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(file)} says it is entry ${entry.value.seq} but follows entry ${before.seq}`,
      );
    if (
      entry.value.record.lifecycle !== before.record.lifecycle &&
      !canTransition(before.record.lifecycle, entry.value.record.lifecycle)
    )
      c.error(
        file,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(file)}: ${before.record.lifecycle} → ${entry.value.record.lifecycle} is not a lifecycle step`,
      );
  };
  shape.line.forEach((entry, i) => {
    if (i === 0 && entry.value.seq !== 1)
      c.error(
        fileOf(entry.name),
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(fileOf(entry.name))} is the first entry but says it is entry ${entry.value.seq}`,
      );
    if (i > 0) checkStep(shape.line[i - 1]!.value, entry);
  });
  const digests = new Set(stored.map((e) => e.digest));
  for (const entry of shape.detached) {
    const file = fileOf(entry.name);
    const before = stored.find((e) => e.digest === entry.previous);
    if (before) {
      checkStep(before.value, entry);
      continue;
    }
    if (entry.previous === null) continue; // a second first entry is a fork, reported above
    // A stored entry that did not read back (edited, so its name no longer fits) was named by its reader.
    if (digests.has(entry.previous) || exists(store.paths.recordHistoryEntry(digest, entry.previous))) continue;
    // The entry before it is gone, or (named by its position) was changed.
    const legacy = typeof entry.key === 'number' ? entry.key - 1 : null;
    const prior = legacy !== null && legacy >= 1 ? store.paths.recordHistoryEntry(digest, legacy) : null;
    if (prior && stored.some((e) => e.key === legacy))
      c.both(
        prior,
        file,
        'RECORD_HISTORY_MISMATCH',
        `${c.rel(prior)} is not the entry ${c.rel(file)} follows (its digest differs from previous_entry_sha256)`,
      );
    else {
      const lost = prior ?? store.paths.recordHistoryEntry(digest, entry.previous);
      c.error(
        lost,
        'MISSING_RECORD_HISTORY',
        `${c.rel(lost)} is missing from the history of ${digest}: ${c.rel(file)} follows it`,
      );
    }
  }
  if (record === undefined || shape.forks.length > 0) return true;
  const last = tipOf(shape);
  if (!last) return true;
  const before =
    shape.detached.length === 0 ? shape.line.at(-2)?.value : stored.find((e) => e.digest === last.previous)?.value;
  const state = standing(last.value, before, record);
  const lastFile = c.rel(fileOf(last.name));
  if (state.kind === 'behind') {
    c.warn(
      recordFile,
      'RECORD_HISTORY_PENDING',
      `${c.rel(recordFile)} is one change behind ${lastFile}: a write ` +
        `cut short after its history entry (autoctx repair completes it)`,
    );
  } else if (state.kind === 'differs' && record === null) {
    c.error(recordFile, 'MISSING_CANDIDATE', `${c.rel(recordFile)} is missing, but ${lastFile} records it`);
  } else if (state.kind === 'differs' && record !== null) {
    // The record or the last entry was changed without the other, or the entries after the last one left were lost.
    const next = lostEntryFiles(store, digest, last.value, record, typeof last.key === 'number');
    const lost =
      next.length > 0
        ? `, or the entry after it (${next.map((f) => c.rel(f)).join(' or ')}) and any after it were lost`
        : '';
    const message =
      `${c.rel(recordFile)} is not the record ${lastFile} holds, nor the one before it: one of the two was ` +
      `changed without the other${lost}`;
    for (const file of [recordFile, fileOf(last.name), ...(typeof last.key === 'number' ? next : [])])
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
