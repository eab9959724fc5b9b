import {fail} from '../../../errors.js';
import {reconcileDigest, type ReconcileRecord} from '../../../model/common/reconcile.js';
import {readDocument} from '../../documents.js';
import {exists, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from './kind-context.js';
import type {ScenarioCheck} from './kind-steps.js';
import path from 'node:path';

/**
 * reconciles/<sha256>.json: what one `autoctx reconcile` did with the other side of a merge (autoctx addition).
 * Immutable, named by its own digest, so two clones' reconciles never write one path with two contents.
 */
export const RECONCILE_SCHEMA = 'reconcile-record' as const;
const NAME = /^[0-9a-f]{64}\.json$/;

export function listReconciles(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.reconcilesDir)
    .filter((e) => e.isFile() && NAME.test(e.name))
    .map((e) => e.name.slice(0, -5))
    .sort();
}

export function readReconcile(ctx: KindContext, digest: string): ReconcileRecord | null {
  return readDocument<ReconcileRecord>(ctx.guard, ctx.paths.reconcile(digest), RECONCILE_SCHEMA, (value) => {
    const r = value as unknown as ReconcileRecord;
    if (reconcileDigest(r) !== digest)
      fail('DIGEST_MISMATCH', 'record is not named by its own digest (its content changed, or it was renamed)');
    if (r.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `record names scenario "${r.scenario}" but lives in "${ctx.scenario}"`);
    return r;
  });
}

/** Record a reconcile (under the scenario lock); returns its digest. */
export function writeReconcile(ctx: KindContext, record: ReconcileRecord): string {
  const digest = reconcileDigest(record);
  ctx.writer.createDocument(ctx.paths.reconcile(digest), RECONCILE_SCHEMA, record);
  return digest;
}

/** Every record reads, and every file a record says its replay wrote is there. */
function checkReconciles(c: Findings, ctx: KindContext): void {
  for (const digest of listReconciles(ctx)) {
    const file = ctx.paths.reconcile(digest);
    const r = c.attempt(file, () => readReconcile(ctx, digest));
    if (!r) continue;
    for (const step of r.steps)
      for (const made of step.made) {
        const target = path.join(ctx.paths.dir, ...made.split('/'));
        if (!exists(target))
          c.error(
            file,
            'RECONCILE_MISMATCH',
            `${c.rel(file)} says its replay of ${step.kind} ${step.subject} wrote ${made}, which is missing`,
          );
      }
  }
}

export const reconcilesCheck: ScenarioCheck = {
  order: 1050,
  scenario(c) {
    checkReconciles(c, c.store);
  },
};
