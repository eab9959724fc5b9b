import {jsonEqual, stableDigest} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import type {ActivePointer} from '../../../model/promotion/records.js';
import {readDocument} from '../../documents.js';
import {exists, listDir} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * foreign_moves/<id>.json: a pointer another implementation's rollback or
 * rollover wrote (that implementation keeps no record of such moves), kept
 * the moment autoctx moves the pointer on from it. While it was active.json
 * its own fields proved the move; kept here they still do, so the move stays
 * on the pointer's history. Immutable; the id is the pointer's digest.
 */
export const FOREIGN_MOVE_SCHEMA = 'foreign-move' as const;
const ID_FILE = /^[0-9a-f]{32}\.json$/;

export interface ForeignMoveRecord {
  schema_version: 1;
  pointer: ActivePointer;
  adopted_at: string;
}

export function foreignMoveId(pointer: ActivePointer): string {
  return stableDigest({foreign_pointer: pointer}).slice(0, 32);
}

export function listForeignMoveIds(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.foreignMovesDir)
    .filter((e) => e.isFile() && ID_FILE.test(e.name))
    .map((e) => e.name.slice(0, -5));
}

export function readForeignMove(ctx: KindContext, id: string): ForeignMoveRecord | null {
  return readDocument<ForeignMoveRecord>(ctx.guard, ctx.paths.foreignMove(id), FOREIGN_MOVE_SCHEMA, (value) => {
    const r = value as unknown as ForeignMoveRecord;
    if (foreignMoveId(r.pointer) !== id)
      fail('DIGEST_MISMATCH', `the pointer it keeps has id ${foreignMoveId(r.pointer)}, but it is stored as ${id}`);
    return r;
  });
}

/** Keep the pointer (once: a pointer kept before is left as it is). Under the scenario lock. */
export function keepForeignMove(ctx: KindContext, pointer: ActivePointer, adoptedAt: string): void {
  const id = foreignMoveId(pointer);
  const existing = exists(ctx.paths.foreignMove(id)) ? readForeignMove(ctx, id) : null;
  if (existing && jsonEqual(existing.pointer, pointer)) return;
  ctx.writer.createDocument(ctx.paths.foreignMove(id), FOREIGN_MOVE_SCHEMA, {
    schema_version: 1,
    pointer,
    adopted_at: adoptedAt,
  } satisfies ForeignMoveRecord);
}
