import {jsonEqual, stableDigest} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {
  curationProblem,
  emptyCuration,
  type Curation,
  type CurationCause,
  type CurationEntry,
} from '../../../model/delivery/curation.js';
import {readDocument} from '../../documents.js';
import path from 'node:path';
import {exists, isDirectory} from '../../files/fs.js';
import {historyKeyOf, type HistoryKey} from '../../layout/history-names.js';
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
import type {Findings} from '../../findings.js';
import {scenarioNameProblem} from '../../paths.js';
import type {KindContext} from '../common/kind-context.js';
import type {ScenarioCheck} from '../common/kind-steps.js';
import {verifyHandoffs} from './handoff.js';

/**
 * context_bundles/bootstrap/curation.json and curation_history/<sha256>.json
 * (autoctx addition): the scenario's bootstrap curation, and every state it
 * has been in. Each change is first written as the next immutable entry,
 * chained to the one before and named by its own digest (`<seq>.json`, as
 * earlier versions named entries, is read as it is), then curation.json: a crash between the two
 * leaves the history one step ahead, which the next change or repair
 * completes. A lost curation.json, or a lost entry, is named by the other.
 */
export const CURATION_SCHEMA = 'curation' as const;
export const CURATION_ENTRY_SCHEMA = 'curation-entry' as const;

function checkCuration(ctx: KindContext, c: Curation): Curation {
  if (c.scenario !== ctx.scenario)
    fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(c.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
  for (const name of [...c.references, ...c.grants]) {
    const problem = scenarioNameProblem(name);
    if (problem) fail('INVALID_NAME', `names scenario ${JSON.stringify(name)}: ${problem}`);
  }
  const problem = curationProblem(c);
  if (problem) fail('INVALID_INPUT', problem);
  return c;
}

export function readCuration(ctx: KindContext): Curation | null {
  return readDocument<Curation>(ctx.guard, ctx.paths.curation, CURATION_SCHEMA, (v) =>
    checkCuration(ctx, v as unknown as Curation),
  );
}

/**
 * The curation in force: curation.json, checked against the history entry it
 * says it is (a hand edit is refused, INTEGRITY, exit 8), or an empty one
 * when the scenario has none.
 */
export function currentCuration(ctx: KindContext): Curation {
  const current = readCuration(ctx);
  if (current === null) return emptyCuration(ctx.scenario);
  const shape = curationShape(ctx);
  refuseFork(ctx, shape);
  const entry = atState(shape, current.seq);
  if (!entry || !jsonEqual(entry.curation, current)) {
    const rel = ctx.guard.relative(ctx.paths.curation);
    fail(
      'INTEGRITY',
      `${rel} is not the curation its history entry ${current.seq} holds ` +
        `(edited by hand, or the entry is missing); run autoctx verify`,
      {file: rel},
    );
  }
  return current;
}

/** Read one stored entry, by the name it is stored under. */
export function readCurationEntryFile(ctx: KindContext, key: HistoryKey): CurationEntry | null {
  return readDocument<CurationEntry>(ctx.guard, ctx.paths.curationEntry(key), CURATION_ENTRY_SCHEMA, (v) => {
    const e = v as unknown as CurationEntry;
    if (e.curation.seq !== e.seq || (typeof key === 'number' && e.seq !== key))
      fail(
        'DIGEST_MISMATCH',
        `entry says it is number ` +
          `${e.curation.seq === e.seq ? e.seq : `${e.seq} holding state ${e.curation.seq}`}` +
          `${typeof key === 'number' ? ` but is stored as number ${key}` : ''}`,
      );
    if (typeof key === 'string' && stableDigest(e) !== key)
      fail('DIGEST_MISMATCH', 'entry is not named by its own digest (its content changed, or it was renamed)');
    if (e.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(e.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
    checkCuration(ctx, e.curation);
    return e;
  });
}

function linkedEntry(name: string, key: HistoryKey, e: CurationEntry): Linked<CurationEntry> {
  return {name, key, value: e, digest: stableDigest(e), previous: e.previous_entry_sha256};
}

/** The curation history as its links make it (an unreadable entry throws). */
export function curationShape(ctx: KindContext): ChainShape<CurationEntry> {
  return shapeOf(
    listEntryNames(ctx.guard, ctx.paths.curationHistoryDir).flatMap((name) => {
      const key = historyKeyOf(name);
      const e = readCurationEntryFile(ctx, key);
      return e ? [linkedEntry(name, key, e)] : [];
    }),
  );
}

function refuseFork(ctx: KindContext, shape: ChainShape<CurationEntry>): void {
  const fork = forkProblem(shape, (n) => ctx.guard.relative(path.join(ctx.paths.curationHistoryDir, n)));
  if (fork) fail('INTEGRITY', fork, {file: ctx.guard.relative(ctx.paths.curationHistoryDir)});
}

/** The entry of state `seq` on the chain (its place on the chain is its number). */
function atState(shape: ChainShape<CurationEntry>, seq: number): CurationEntry | null {
  const e = shape.line[seq - 1]?.value;
  return e && e.seq === seq ? e : null;
}

/** The entry that holds state `seq`, on the chain from the first (null: none). */
export function readCurationEntry(ctx: KindContext, seq: number): CurationEntry | null {
  return atState(curationShape(ctx), seq);
}

/** The entries stored under their positions, as earlier versions named them (`autoctx repair` renames them). */
export function seqNamedCuration(ctx: KindContext): SeqNamed[] {
  return seqNamedEntries(
    ctx.guard,
    ctx.paths.curationHistoryDir,
    (key) => ctx.paths.curationEntry(key),
    (seq) => readCurationEntryFile(ctx, seq),
    stableDigest,
  );
}

/** The file an entry is stored in: its digest's name, or the position an earlier version named it by. */
export function curationEntryFile(ctx: KindContext, e: CurationEntry): string {
  const named = ctx.paths.curationEntry(stableDigest(e));
  return exists(named) ? named : ctx.paths.curationEntry(e.seq);
}

/**
 * Under the scenario lock: the curation after completing a change cut short
 * (an entry written, curation.json not yet), which is then written; with the
 * entry completed, if any.
 */
export function settleCuration(ctx: KindContext): {curation: Curation; completed: CurationEntry | null} {
  const current = readCuration(ctx);
  const shape = curationShape(ctx);
  refuseFork(ctx, shape);
  const tip = shape.detached.length > 0 ? null : shape.line.at(-1);
  if (tip === undefined) return {curation: current ?? emptyCuration(ctx.scenario), completed: null};
  const last = tip?.value ?? null;
  const seq = last?.seq ?? Math.max(...shape.detached.map((e) => e.value.seq));
  // A change builds only on a curation its history vouches for: a hand edit is never carried into a new entry.
  if (current !== null && seq === current.seq && last && jsonEqual(last.curation, current))
    return {curation: current, completed: null};
  if (last && seq === (current?.seq ?? 0) + 1) {
    ctx.writer.replaceDocument(ctx.paths.curation, CURATION_SCHEMA, last.curation);
    return {curation: last.curation, completed: last};
  }
  fail(
    'INTEGRITY',
    `${ctx.guard.relative(ctx.paths.curation)} does not follow its history ` +
      `(${current ? `state ${current.seq}` : 'missing'}, history at ${seq}); run autoctx verify`,
    {file: ctx.guard.relative(ctx.paths.curation)},
  );
}

export function settledCuration(ctx: KindContext): Curation {
  return settleCuration(ctx).curation;
}

/** Under the scenario lock: record a change as the next entry, then write curation.json. Returns the new curation. */
export function changeCuration(
  ctx: KindContext,
  change: (current: Curation) => Omit<Curation, 'seq'>,
  cause: CurationCause,
  at: string,
): Curation {
  const current = settledCuration(ctx);
  const seq = current.seq + 1;
  const next: Curation = {...change(current), seq};
  checkCuration(ctx, next);
  const previous = current.seq === 0 ? null : readCurationEntry(ctx, current.seq);
  const entry: CurationEntry = {
    schema_version: 1,
    scenario: ctx.scenario,
    seq,
    previous_entry_sha256: previous ? stableDigest(previous) : null,
    cause,
    written_at: at,
    curation: next,
  };
  ctx.writer.createDocument(ctx.paths.curationEntry(stableDigest(entry)), CURATION_ENTRY_SCHEMA, entry);
  ctx.writer.replaceDocument(ctx.paths.curation, CURATION_SCHEMA, next);
  return next;
}

/**
 * verify: the history is one chain from its first entry, each entry named by
 * its own digest (or by its position, as earlier versions named them) and
 * numbered by its place; two entries that follow the same one are a fork
 * (DIVERGED); curation.json is its last entry (or the one before, after a
 * crash: a warning), and a lost curation.json is named. Returns the curation
 * to check the rest against.
 */
export function verifyCuration(c: Findings): Curation | undefined {
  const {store} = c;
  const paths = store.paths;
  if (!isDirectory(paths.bootstrapDir)) return emptyCuration(store.scenario);
  const current = c.attempt(paths.curation, () => readCuration(store));
  const dir = paths.curationHistoryDir;
  const fileOf = (name: string) => path.join(dir, name);
  const names = listEntryNames(store.guard, dir);
  const stored: Array<Linked<CurationEntry>> = [];
  for (const name of names) {
    const key = historyKeyOf(name);
    const e = c.attempt(fileOf(name), () => readCurationEntryFile(store, key));
    if (e) stored.push(linkedEntry(name, key, e));
  }
  const shape = shapeOf(stored);
  for (const fork of shape.forks) {
    const before = stored.find((e) => e.digest === fork[0]!.previous);
    const message = forkMessage(
      fork.map((e) => c.rel(fileOf(e.name))),
      'the curation history',
      before ? c.rel(fileOf(before.name)) : 'no entry (each is a first entry)',
    );
    for (const e of fork) c.error(fileOf(e.name), 'DIVERGED', message);
  }
  if (current === null) {
    // The first change cut short after its entry: pending, as any later one.
    if (names.length === 1 && stored.length === 1 && stored[0]!.value.seq === 1 && stored[0]!.previous === null) {
      c.warn(
        paths.curation,
        'CURATION_PENDING',
        `${c.rel(paths.curation)} is not written yet, its first history entry is (a ` +
          `curation change was cut short); the next change, or autoctx repair, completes it`,
      );
      return emptyCuration(store.scenario);
    }
    if (names.length > 0)
      c.error(
        paths.curation,
        'MISSING_CURATION',
        `${c.rel(paths.curation)} is missing, but the scenario keeps a curation history`,
      );
    // handoffs without a curation: verifyHandoffs names them
    else if (exists(paths.handoffsDir)) return emptyCuration(store.scenario);
    return undefined;
  }
  shape.line.forEach((e, i) => {
    if (e.value.seq !== i + 1)
      c.error(
        fileOf(e.name),
        'CURATION_MISMATCH',
        `${c.rel(fileOf(e.name))} says it is entry ${e.value.seq} but is entry ${i + 1} of the curation history`,
      );
  });
  const digests = new Set(stored.map((e) => e.digest));
  for (const e of shape.detached) {
    if (e.previous === null || digests.has(e.previous) || exists(fileOf(`${e.previous}.json`))) continue;
    const legacy = typeof e.key === 'number' && e.key > 1 ? fileOf(`${String(e.key - 1).padStart(6, '0')}.json`) : null;
    if (legacy && exists(legacy))
      c.both(
        legacy,
        fileOf(e.name),
        'CURATION_MISMATCH',
        `${c.rel(fileOf(e.name))} does not chain to the entry before it ` +
          `(previous_entry_sha256 differs from the digest of ${c.rel(legacy)})`,
      );
    else {
      const lost = legacy ?? fileOf(`${e.previous}.json`);
      c.error(
        lost,
        'MISSING_CURATION',
        `${c.rel(lost)} is missing from the curation history: ${c.rel(fileOf(e.name))} follows it`,
      );
    }
  }
  if (current === undefined || shape.forks.length > 0) return current;
  const tip = shape.detached.length > 0 ? null : (shape.line.at(-1) ?? null);
  const top = tip?.value.seq ?? Math.max(0, ...stored.map((e) => e.value.seq));
  const atTop = shape.line[current.seq - 1]?.value;
  if (current.seq === top && atTop && jsonEqual(atTop.curation, current)) return current;
  if (current.seq === top - 1 && atTop && jsonEqual(atTop.curation, current) && tip) {
    c.warn(
      paths.curation,
      'CURATION_PENDING',
      `${c.rel(paths.curation)} is one change behind its history (a curation ` +
        `change was cut short); the next change, or autoctx repair, completes it`,
    );
    return current;
  }
  if (current.seq > top && shape.detached.length === 0) {
    // Nothing names the lost entry's file but an entry after it: curation.json names it by its number.
    c.error(
      dir,
      'MISSING_CURATION',
      `${c.rel(dir)} has no entry for state ${current.seq}: ${c.rel(paths.curation)} ` +
        `is state ${current.seq}, but its history ends at state ${top}`,
    );
  }
  if (atTop || current.seq > top) {
    const entry = shape.line[Math.min(current.seq, Math.max(top, 1)) - 1];
    c.both(
      paths.curation,
      entry ? fileOf(entry.name) : dir,
      'CURATION_MISMATCH',
      `${c.rel(paths.curation)} (state ${current.seq}) is not the last entry of its history (${top})`,
    );
  }
  return current;
}

/** verify: every tag names a component some verified bundle of the scenario holds, with that kind and key. */
export function verifyTags(c: Findings, curation: Curation): void {
  if (curation.tags.length === 0) return;
  const wanted = new Map(curation.tags.map((t) => [t.component_digest, t]));
  const found = new Map<string, {kind: string; key: string}>();
  for (const outline of c.bundles.values()) {
    for (const comp of outline.components)
      if (wanted.has(comp.digest) && !found.has(comp.digest)) found.set(comp.digest, comp);
    if (found.size === wanted.size) break;
  }
  const file = c.store.paths.curation;
  for (const tag of curation.tags) {
    const comp = found.get(tag.component_digest);
    if (!comp)
      c.error(
        file,
        'TAG_UNKNOWN_COMPONENT',
        `${c.rel(file)} tags component ${tag.component_digest}, which no stored bundle of the scenario holds`,
      );
    else if (comp.kind !== tag.kind || comp.key !== tag.key)
      c.error(
        file,
        'TAG_UNKNOWN_COMPONENT',
        `${c.rel(file)} tags component ${tag.component_digest} as ` +
          `${tag.kind}/${tag.key}, but the bundles hold it as ${comp.kind}/${comp.key}`,
      );
  }
}

/** verify: the curation, then its tags and the handoffs it indexes. */
export const curationCheck: ScenarioCheck = {
  order: 800,
  scenario(c) {
    const curation = verifyCuration(c);
    if (curation) {
      verifyTags(c, curation);
      verifyHandoffs(c, curation);
    }
  },
};
