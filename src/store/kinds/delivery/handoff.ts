import path from 'node:path';
import {stableDigest} from '../../../canonical/index.js';
import {leftoverKind} from '../../paths.js';
import {fail, isAutoctxError, rethrowUnless} from '../../../errors.js';
import {
  handoffIdProblem,
  type Curation,
  type HandoffHead,
  type HandoffRevision,
} from '../../../model/delivery/curation.js';
import {readDocument} from '../../documents.js';
import {exists, isDirectory, listDir} from '../../files/fs.js';
import {historyKeyOf, type HistoryKey} from '../../layout/history-names.js';
import {
  forkMessage,
  listEntryNames,
  seqNamedEntries,
  shapeOf,
  type ChainShape,
  type Linked,
  type SeqNamed,
} from '../common/entry-chain.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * context_bundles/bootstrap/handoffs/<id>/<sha256>.json (autoctx addition):
 * immutable revisions 1, 2, 3 … of each handoff, each chained to the one
 * before by its document's stable digest and named by its own (the digest
 * the revision after it, or the curation's head, names it by);
 * `<revision>.json`, as earlier versions named them, is read as it is. The
 * curation holds each handoff's head, so that a lost latest revision is
 * named.
 */
export const HANDOFF_SCHEMA = 'handoff' as const;

/** One stored revision, by the name it is stored under. */
export function readHandoffFile(ctx: KindContext, id: string, key: HistoryKey): HandoffRevision | null {
  return readDocument<HandoffRevision>(ctx.guard, ctx.paths.handoffRevision(id, key), HANDOFF_SCHEMA, (v) => {
    const h = v as unknown as HandoffRevision;
    if (h.id !== id || (typeof key === 'number' && h.revision !== key))
      fail('DIGEST_MISMATCH', `says it is ${h.id}@${h.revision} but is stored as ${id}@${key}`);
    if (typeof key === 'string' && stableDigest(h) !== key)
      fail('DIGEST_MISMATCH', 'is not named by its own digest (its content changed, or it was renamed)');
    if (h.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(h.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
    if ((h.revision === 1) !== (h.previous_document_digest === null))
      fail('DIGEST_MISMATCH', 'previous_document_digest must be null exactly for revision 1');
    if (stableDigest(h.content) !== h.content_digest)
      fail('DIGEST_MISMATCH', 'content_digest does not match the content');
    return h;
  });
}

function linkedRevision(name: string, key: HistoryKey, h: HandoffRevision): Linked<HandoffRevision> {
  return {name, key, value: h, digest: stableDigest(h), previous: h.previous_document_digest};
}

/** A handoff's revisions as their links make them (an unreadable one throws). */
export function handoffShape(ctx: KindContext, id: string): ChainShape<HandoffRevision> {
  return shapeOf(
    listEntryNames(ctx.guard, ctx.paths.handoffDir(id)).flatMap((name) => {
      const key = historyKeyOf(name);
      const h = readHandoffFile(ctx, id, key);
      return h ? [linkedRevision(name, key, h)] : [];
    }),
  );
}

/**
 * The revision whose digest is `digest` (revision `revision` of the handoff), wherever it is stored: under its digest,
 * or under its number as earlier versions stored it. Null when neither holds it.
 */
export function readHandoffAt(ctx: KindContext, id: string, digest: string, revision: number): HandoffRevision | null {
  let named: HandoffRevision | null;
  try {
    named = readHandoffFile(ctx, id, digest);
  } catch (error) {
    // A file under that name whose bytes are not that revision's does not hold it (verify names the file).
    rethrowUnless(error, isAutoctxError);
    return null;
  }
  if (named) return named;
  const legacy = revision >= 1 && revision <= 999999 ? readHandoffFile(ctx, id, revision) : null;
  return legacy && stableDigest(legacy) === digest ? legacy : null;
}

/** A handoff's revisions stored under their numbers, as earlier versions named them (`autoctx repair` renames them). */
export function seqNamedRevisions(ctx: KindContext, id: string): SeqNamed[] {
  return seqNamedEntries(
    ctx.guard,
    ctx.paths.handoffDir(id),
    (key) => ctx.paths.handoffRevision(id, key),
    (seq) => readHandoffFile(ctx, id, seq),
    stableDigest,
  );
}

/** The file a revision is stored in: its digest's name, or the number an earlier version named it by. */
export function revisionFile(ctx: KindContext, h: HandoffRevision): string {
  const named = ctx.paths.handoffRevision(h.id, stableDigest(h));
  return exists(named) ? named : ctx.paths.handoffRevision(h.id, h.revision);
}

/** Revision `revision` of a handoff: the one at that place on its chain (null: none there). */
export function readHandoff(ctx: KindContext, id: string, revision: number): HandoffRevision | null {
  const h = handoffShape(ctx, id).line[revision - 1]?.value;
  return h && h.revision === revision ? h : null;
}

/** The revision a curation head names, by its digest (null: not stored). */
export function readHead(ctx: KindContext, head: HandoffHead): HandoffRevision | null {
  return readHandoffAt(ctx, head.id, head.document_digest, head.revision);
}

/** The ids with a folder under handoffs/. */
export function listHandoffIds(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.handoffsDir)
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

/** Under the scenario lock: write a revision (immutable; the same bytes again are accepted). */
export function createHandoff(ctx: KindContext, revision: HandoffRevision): void {
  ctx.writer.createDocument(ctx.paths.handoffRevision(revision.id, stableDigest(revision)), HANDOFF_SCHEMA, revision);
}

/** A revision stored beyond its head, chained to it: written by a handoff write cut short before its curation entry. */
export function pendingRevision(ctx: KindContext, curation: Curation, id: string): HandoffRevision | null {
  const head = curation.handoffs.find((h) => h.id === id);
  let shape: ChainShape<HandoffRevision>;
  try {
    shape = handoffShape(ctx, id);
  } catch (error) {
    // A revision that does not read back completes nothing (verify names it; a writer then refuses the head).
    rethrowUnless(error, isAutoctxError);
    return null;
  }
  if (shape.forks.length > 0) return null;
  const previous = head ? readHead(ctx, head) : null;
  if (head && !previous) return null;
  const after = (previous ? shape.line.findIndex((e) => e.digest === head!.document_digest) : -1) + 1;
  const next = shape.line[after];
  // Only the very next revision, and nothing after it.
  if (!next || after !== shape.line.length - 1 || shape.detached.length > 0) return null;
  return next.value.revision === (head?.revision ?? 0) + 1 ? next.value : null;
}

/**
 * verify: every head's revisions are one chain from revision 1 to the revision the head names by its digest, each
 * named by its own digest (or its number, as earlier versions named them) and numbered by its place; two revisions
 * that follow the same one are a fork (DIVERGED); nothing stored beyond a head but a write cut short.
 */
export function verifyHandoffs(c: Findings, curation: Curation): void {
  const {store} = c;
  if (!isDirectory(store.paths.handoffsDir)) {
    for (const head of curation.handoffs)
      c.error(
        store.paths.handoffRevision(head.id, head.document_digest),
        'MISSING_HANDOFF',
        `${c.rel(store.paths.handoffRevision(head.id, head.document_digest))} is missing: ` +
          `${c.rel(store.paths.curation)} names handoff ${head.id}@${head.revision}`,
      );
    return;
  }
  const heads = new Map(curation.handoffs.map((h) => [h.id, h]));
  for (const id of listHandoffIds(store)) {
    // A folder a handoff write made and was killed before filling: it holds nothing (a temporary file at most, which
    // verify names) and claims nothing.
    if (
      handoffIdProblem(id) === null &&
      !heads.has(id) &&
      listDir(store.guard, store.paths.handoffDir(id)).every(
        (e) => e.isFile() && leftoverKind(path.join(store.paths.handoffDir(id), e.name), 'file') === 'temp',
      )
    )
      continue;
    if (handoffIdProblem(id) !== null || !heads.has(id)) {
      const pending =
        handoffIdProblem(id) === null
          ? c.attempt(store.paths.handoffDir(id), () => pendingRevision(store, curation, id))
          : null;
      if (pending && pending.revision === 1 && listEntryNames(store.guard, store.paths.handoffDir(id)).length === 1) {
        const file = revisionFile(store, pending);
        c.warn(
          file,
          'HANDOFF_PENDING',
          `${c.rel(file)} is not yet in ${c.rel(store.paths.curation)} (a handoff ` +
            `write was cut short); the next change, or autoctx repair, completes it`,
        );
      } else
        c.error(
          store.paths.handoffDir(id),
          'MISSING_CURATION',
          `${c.rel(store.paths.handoffDir(id))} is a handoff that ${c.rel(store.paths.curation)} does not name`,
        );
    }
  }
  for (const head of curation.handoffs) verifyHandoff(c, curation, head);
}

function verifyHandoff(c: Findings, curation: Curation, head: HandoffHead): void {
  const {store} = c;
  const dir = store.paths.handoffDir(head.id);
  const fileOf = (name: string) => path.join(dir, name);
  const stored: Array<Linked<HandoffRevision>> = [];
  for (const name of listEntryNames(store.guard, dir)) {
    const key = historyKeyOf(name);
    const h = c.attempt(fileOf(name), () => readHandoffFile(store, head.id, key));
    if (h) stored.push(linkedRevision(name, key, h));
  }
  const shape = shapeOf(stored);
  for (const fork of shape.forks) {
    const before = stored.find((e) => e.digest === fork[0]!.previous);
    const message = forkMessage(
      fork.map((e) => c.rel(fileOf(e.name))),
      `handoff ${head.id}`,
      before ? c.rel(fileOf(before.name)) : 'no revision (each is a revision 1)',
    );
    for (const e of fork) c.error(fileOf(e.name), 'DIVERGED', message);
  }
  shape.line.forEach((e, i) => {
    if (e.value.revision !== i + 1)
      c.error(
        fileOf(e.name),
        'HANDOFF_MISMATCH',
        `${c.rel(fileOf(e.name))} says it is revision ${e.value.revision} ` +
          `but is revision ${i + 1} of handoff ${head.id}`,
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
        'HANDOFF_MISMATCH',
        `${c.rel(fileOf(e.name))} does not chain to revision ` +
          `${e.value.revision - 1} (previous_document_digest differs from its digest)`,
      );
    else {
      const lost = legacy ?? fileOf(`${e.previous}.json`);
      c.error(
        lost,
        'MISSING_HANDOFF',
        `${c.rel(lost)} is missing: ${c.rel(fileOf(e.name))} of handoff ${head.id} follows it`,
      );
    }
  }
  if (shape.forks.length > 0) return;
  // The head: the revision the curation names by its digest, on the chain.
  const at = shape.line.findIndex((e) => e.digest === head.document_digest);
  if (at === -1) {
    const legacy = head.revision <= 999999 ? store.paths.handoffRevision(head.id, head.revision) : null;
    if (legacy && exists(legacy) && !exists(store.paths.handoffRevision(head.id, head.document_digest)))
      c.both(
        legacy,
        store.paths.curation,
        'HANDOFF_MISMATCH',
        `${c.rel(legacy)} is not the revision ${c.rel(store.paths.curation)} names as the head of ${head.id}`,
      );
    else if (!digests.has(head.document_digest)) {
      const file = store.paths.handoffRevision(head.id, head.document_digest);
      if (!exists(file))
        c.error(
          file,
          'MISSING_HANDOFF',
          `${c.rel(file)} is missing: ${c.rel(store.paths.curation)} ` +
            `names handoff ${head.id}@${head.revision} by its digest`,
        );
    }
    return;
  }
  if (at + 1 !== head.revision)
    c.both(
      fileOf(shape.line[at]!.name),
      store.paths.curation,
      'HANDOFF_MISMATCH',
      `${c.rel(store.paths.curation)} names ${head.id}@${head.revision}, ` +
        `but the revision it names by digest is revision ${at + 1}`,
    );
  const beyond = [...shape.line.slice(at + 1), ...shape.detached];
  if (beyond.length === 0) return;
  const pending = beyond.length === 1 ? c.attempt(dir, () => pendingRevision(store, curation, head.id)) : null;
  if (pending) {
    const file = revisionFile(store, pending);
    c.warn(
      file,
      'HANDOFF_PENDING',
      `${c.rel(file)} is not yet in ${c.rel(store.paths.curation)} (a handoff ` +
        `write was cut short); the next change, or autoctx repair, completes it`,
    );
  } else
    for (const e of beyond)
      c.error(
        fileOf(e.name),
        'HANDOFF_MISMATCH',
        `${c.rel(fileOf(e.name))} lies beyond the head ` +
          `${head.id}@${head.revision} that ${c.rel(store.paths.curation)} names`,
      );
}
