import path from 'node:path';
import {stableDigest} from '../../../canonical/index.js';
import {leftoverKind} from '../../paths.js';
import {fail} from '../../../errors.js';
import {handoffIdProblem, type Curation, type HandoffRevision} from '../../../model/delivery/curation.js';
import {readDocument} from '../../documents.js';
import {isDirectory, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * context_bundles/bootstrap/handoffs/<id>/<revision>.json (autoctx
 * addition): immutable revisions 1, 2, 3 … of each handoff, each chained to
 * the one before by its document's stable digest. The curation holds each
 * handoff's head, so that a lost latest revision is named.
 */
export const HANDOFF_SCHEMA = 'handoff' as const;
const REVISION_FILE = /^\d{6}\.json$/;

export function readHandoff(ctx: KindContext, id: string, revision: number): HandoffRevision | null {
  return readDocument<HandoffRevision>(ctx.guard, ctx.paths.handoffRevision(id, revision), HANDOFF_SCHEMA, (v) => {
    const h = v as unknown as HandoffRevision;
    if (h.id !== id || h.revision !== revision)
      fail('DIGEST_MISMATCH', `says it is ${h.id}@${h.revision} but is stored as ${id}@${revision}`);
    if (h.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(h.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
    if ((h.revision === 1) !== (h.previous_document_digest === null))
      fail('DIGEST_MISMATCH', 'previous_document_digest must be null exactly for revision 1');
    if (stableDigest(h.content) !== h.content_digest)
      fail('DIGEST_MISMATCH', 'content_digest does not match the content');
    return h;
  });
}

/** The revisions stored for a handoff, ascending. */
export function listRevisions(ctx: KindContext, id: string): number[] {
  return listDir(ctx.guard, ctx.paths.handoffDir(id))
    .filter((e) => e.isFile() && REVISION_FILE.test(e.name))
    .map((e) => Number(e.name.slice(0, 6)))
    .sort((a, b) => a - b);
}

/** The ids with a folder under handoffs/. */
export function listHandoffIds(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.handoffsDir)
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
}

/** Under the scenario lock: write a revision (immutable; the same bytes again are accepted). */
export function createHandoff(ctx: KindContext, revision: HandoffRevision): void {
  ctx.writer.createDocument(ctx.paths.handoffRevision(revision.id, revision.revision), HANDOFF_SCHEMA, revision);
}

/** A revision stored beyond its head, chained to it: written by a handoff write cut short before its curation entry. */
export function pendingRevision(ctx: KindContext, curation: Curation, id: string): HandoffRevision | null {
  const head = curation.handoffs.find((h) => h.id === id);
  const next = (head?.revision ?? 0) + 1;
  if (!listRevisions(ctx, id).includes(next)) return null;
  const doc = readHandoff(ctx, id, next);
  if (!doc) return null;
  const previous = head ? readHandoff(ctx, id, head.revision) : null;
  if (head && (!previous || stableDigest(previous) !== head.document_digest)) return null;
  return doc.previous_document_digest === (previous ? stableDigest(previous) : null) ? doc : null;
}

/**
 * verify: every head's revisions run 1…head without a gap, chained, the head's digest matching; nothing stored beyond a
 * head.
 */
export function verifyHandoffs(c: Findings, curation: Curation): void {
  const {store} = c;
  if (!isDirectory(store.paths.handoffsDir)) {
    for (const head of curation.handoffs)
      c.error(
        store.paths.handoffRevision(head.id, head.revision),
        'MISSING_HANDOFF',
        `${c.rel(store.paths.handoffRevision(head.id, head.revision))} is missing: ` +
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
      if (pending && pending.revision === 1 && listRevisions(store, id).length === 1) {
        c.warn(
          store.paths.handoffRevision(id, 1),
          'HANDOFF_PENDING',
          `${c.rel(store.paths.handoffRevision(id, 1))} is not yet in ${c.rel(store.paths.curation)} (a ` +
            `handoff write was cut short); the next change, or autoctx repair, completes it`,
        );
      } else
        c.error(
          store.paths.handoffDir(id),
          'MISSING_CURATION',
          `${c.rel(store.paths.handoffDir(id))} is a handoff that ${c.rel(store.paths.curation)} does not name`,
        );
    }
  }
  for (const head of curation.handoffs) {
    const stored = new Set(listRevisions(store, head.id));
    let previous: HandoffRevision | null | undefined = null;
    for (let rev = 1; rev <= head.revision; rev++) {
      const file = store.paths.handoffRevision(head.id, rev);
      if (!stored.has(rev)) {
        c.error(
          file,
          'MISSING_HANDOFF',
          `${c.rel(file)} is missing: handoff ${head.id} has revisions 1 to ${head.revision}`,
        );
        previous = undefined;
        continue;
      }
      const doc = c.attempt(file, () => readHandoff(store, head.id, rev));
      if (!doc) {
        previous = undefined;
        continue;
      }
      if (previous !== undefined && doc.previous_document_digest !== (previous ? stableDigest(previous) : null)) {
        // Either of the two may be the one changed: both are named.
        const message =
          `${c.rel(file)} does not chain to revision ${rev - 1} (previous_document_digest differs from its ` +
          `digest)`;
        if (previous) c.both(store.paths.handoffRevision(head.id, rev - 1), file, 'HANDOFF_MISMATCH', message);
        else c.error(file, 'HANDOFF_MISMATCH', message);
      }
      if (rev === head.revision && stableDigest(doc) !== head.document_digest)
        c.both(
          file,
          store.paths.curation,
          'HANDOFF_MISMATCH',
          `${c.rel(file)} is not the revision ${c.rel(store.paths.curation)} names as the head of ${head.id}`,
        );
      previous = doc;
    }
    const beyond = [...stored].filter((r) => r > head.revision);
    if (
      beyond.length === 1 &&
      beyond[0] === head.revision + 1 &&
      c.attempt(store.paths.handoffDir(head.id), () => pendingRevision(store, curation, head.id))
    ) {
      c.warn(
        store.paths.handoffRevision(head.id, head.revision + 1),
        'HANDOFF_PENDING',
        `${c.rel(store.paths.handoffRevision(head.id, head.revision + 1))} is not yet in ` +
          `${c.rel(store.paths.curation)} (a handoff write was cut short); the next change, or autoctx ` +
          `repair, completes it`,
      );
    } else
      for (const r of beyond)
        c.error(
          store.paths.handoffRevision(head.id, r),
          'HANDOFF_MISMATCH',
          `${c.rel(store.paths.handoffRevision(head.id, r))} lies beyond the head ` +
            `${head.id}@${head.revision} that ${c.rel(store.paths.curation)} names`,
        );
  }
}
