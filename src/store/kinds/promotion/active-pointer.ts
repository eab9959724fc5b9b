import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import type {ActivePointer} from '../../../model/promotion/records.js';
import {compareAndSwap, documentDigest} from '../../files/cas.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';

/** context_bundles/active.json: the serving pointer, moved only by compare-and-swap. */
export const ACTIVE_SCHEMA = 'active' as const;

export function activePath(ctx: KindContext): string {
  return ctx.paths.active;
}

export function readActive(ctx: KindContext): ActivePointer | null {
  return readDocument<ActivePointer>(ctx.guard, ctx.paths.active, ACTIVE_SCHEMA);
}

export function requireActive(ctx: KindContext): ActivePointer {
  const a = readActive(ctx);
  if (!a)
    fail('NOT_INITIALIZED', `scenario "${ctx.scenario}" has no active bundle; run autoctx init first`, {
      scenario: ctx.scenario,
    });
  return a;
}

/** The digest a pointer move compares against (null: no pointer yet). */
export function activeDigest(ctx: KindContext): string | null {
  return documentDigest(ctx.writer, ctx.paths.active);
}

/**
 * Move the pointer by compare-and-swap: only if active.json still has the
 * digest `expected` (null: none yet). A pointer that moved is ACTIVE_MOVED
 * (exit 6) and nothing is written.
 */
export function swapActive(ctx: KindContext, expected: string | null, next: ActivePointer): void {
  compareAndSwap(ctx.writer, ctx.paths.active, ACTIVE_SCHEMA, expected, next, (found) =>
    fail(
      'ACTIVE_MOVED',
      `active.json moved while this command decided (expected ${expected ?? 'none'}, found ` +
        `${found ?? 'none'}); nothing was written`,
      {file: ctx.guard.relative(ctx.paths.active)},
    ),
  );
}
