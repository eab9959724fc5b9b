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
import {exists, isDirectory, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import {scenarioNameProblem} from '../../paths.js';
import type {KindContext} from '../common/kind-context.js';
import type {ScenarioCheck} from '../common/kind-steps.js';
import {verifyHandoffs} from './handoff.js';

/**
 * context_bundles/bootstrap/curation.json and curation_history/<seq>.json
 * (autoctx addition): the scenario's bootstrap curation, and every state it
 * has been in. Each change is first written as the next immutable entry,
 * chained to the one before, then curation.json: a crash between the two
 * leaves the history one step ahead, which the next change or repair
 * completes. A lost curation.json, or a lost entry, is named by the other.
 */
export const CURATION_SCHEMA = 'curation' as const;
export const CURATION_ENTRY_SCHEMA = 'curation-entry' as const;
const ENTRY_FILE = /^\d{6}\.json$/;

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
  const entry = readCurationEntry(ctx, current.seq);
  if (!entry || !jsonEqual(entry.curation, current)) {
    const rel = ctx.guard.relative(ctx.paths.curation);
    fail(
      'INTEGRITY',
      `${rel} is not the curation its history entry ${current.seq} holds (edited by hand, or the entry is ` +
        `missing); run autoctx verify`,
      {file: rel},
    );
  }
  return current;
}

export function listCurationSeqs(ctx: KindContext): number[] {
  return listDir(ctx.guard, ctx.paths.curationHistoryDir)
    .filter((e) => e.isFile() && ENTRY_FILE.test(e.name))
    .map((e) => Number(e.name.slice(0, 6)))
    .sort((a, b) => a - b);
}

export function readCurationEntry(ctx: KindContext, seq: number): CurationEntry | null {
  return readDocument<CurationEntry>(ctx.guard, ctx.paths.curationEntry(seq), CURATION_ENTRY_SCHEMA, (v) => {
    const e = v as unknown as CurationEntry;
    if (e.seq !== seq || e.curation.seq !== seq)
      fail(
        'DIGEST_MISMATCH',
        `entry says it is number ` +
          `${e.curation.seq === e.seq ? e.seq : `${e.seq} holding state ${e.curation.seq}`} but is stored as ` +
          `number ${seq}`,
      );
    if (e.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(e.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
    checkCuration(ctx, e.curation);
    return e;
  });
}

/**
 * Under the scenario lock: the curation after completing a change cut short
 * (an entry written, curation.json not yet), which is then written; with the
 * entry completed, if any.
 */
export function settleCuration(ctx: KindContext): {curation: Curation; completed: CurationEntry | null} {
  const current = readCuration(ctx);
  const seq = listCurationSeqs(ctx).at(-1);
  if (seq === undefined) return {curation: current ?? emptyCuration(ctx.scenario), completed: null};
  const last = readCurationEntry(ctx, seq);
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
  ctx.writer.createDocument(ctx.paths.curationEntry(seq), CURATION_ENTRY_SCHEMA, entry);
  ctx.writer.replaceDocument(ctx.paths.curation, CURATION_SCHEMA, next);
  return next;
}

/**
 * verify: the history is 1…n without a gap and chained, curation.json is its
 * last entry (or the one before, after a crash: a warning), and a lost
 * curation.json is named. Returns the curation to check the rest against.
 */
export function verifyCuration(c: Findings): Curation | undefined {
  const {store} = c;
  const paths = store.paths;
  if (!isDirectory(paths.bootstrapDir)) return emptyCuration(store.scenario);
  const current = c.attempt(paths.curation, () => readCuration(store));
  const seqs = listCurationSeqs(store);
  if (current === null) {
    // The first change cut short after its entry: pending, as any later one.
    const first =
      seqs.length === 1 && seqs[0] === 1
        ? c.attempt(paths.curationEntry(1), () => readCurationEntry(store, 1))
        : undefined;
    if (first) {
      c.warn(
        paths.curation,
        'CURATION_PENDING',
        `${c.rel(paths.curation)} is not written yet, its first history entry is (a curation change was ` +
          `cut short); the next change, or autoctx repair, completes it`,
      );
      return emptyCuration(store.scenario);
    }
    if (seqs.length > 0)
      c.error(
        paths.curation,
        'MISSING_CURATION',
        `${c.rel(paths.curation)} is missing, but the scenario keeps a curation history`,
      );
    // handoffs without a curation: verifyHandoffs names them
    else if (exists(paths.handoffsDir)) return emptyCuration(store.scenario);
    return undefined;
  }
  const last = Math.max(seqs.at(-1) ?? 0, current?.seq ?? 0);
  let previous: CurationEntry | null | undefined = null;
  const entries = new Map<number, CurationEntry>();
  for (let seq = 1; seq <= last; seq++) {
    const file = paths.curationEntry(seq);
    if (!seqs.includes(seq)) {
      c.error(
        file,
        'MISSING_CURATION',
        `${c.rel(file)} is missing: the curation history must run from 1 to ${last} without a gap`,
      );
      previous = undefined;
      continue;
    }
    const entry = c.attempt(file, () => readCurationEntry(store, seq));
    if (!entry) {
      previous = undefined;
      continue;
    }
    if (previous !== undefined && entry.previous_entry_sha256 !== (previous ? stableDigest(previous) : null)) {
      // Either of the two may be the one changed: both are named.
      const message =
        `${c.rel(file)} does not chain to the entry before it (previous_entry_sha256 differs from the digest ` +
        `of ${c.rel(paths.curationEntry(seq - 1))})`;
      if (previous) c.both(paths.curationEntry(seq - 1), file, 'CURATION_MISMATCH', message);
      else c.error(file, 'CURATION_MISMATCH', message);
    }
    entries.set(seq, entry);
    previous = entry;
  }
  if (current === undefined) return undefined;
  const top = seqs.at(-1) ?? 0;
  const atTop = entries.get(current.seq);
  if (current.seq === top && atTop && jsonEqual(atTop.curation, current)) return current;
  if (current.seq === top - 1 && atTop && jsonEqual(atTop.curation, current) && entries.has(top)) {
    c.warn(
      paths.curation,
      'CURATION_PENDING',
      `${c.rel(paths.curation)} is one change behind its history (a curation change was cut short); the ` +
        `next change, or autoctx repair, completes it`,
    );
    return current;
  }
  if (atTop || current.seq > top) {
    c.both(
      paths.curation,
      paths.curationEntry(Math.min(current.seq, Math.max(top, 1))),
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
        `${c.rel(file)} tags component ${tag.component_digest} as ${tag.kind}/${tag.key}, but the bundles ` +
          `hold it as ${comp.kind}/${comp.key}`,
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
