import {sha256Hex} from '../../../canonical/index.js';
import {parseSignature} from '../../../model/signing/sshsig.js';
import {serialize} from '../../documents.js';
import {exists, readBytes} from '../../files/fs.js';
import type {SchemaName} from '../../schemas.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * Detached signatures, `<file>.sig` beside the record they sign (ARCHITECTURE
 * §10.3): the armored SSH signature, namespace autoctx, of
 * `autoctx-sig-v1\n<kind>\n<sha256 of the record's exact bytes>\n`. The
 * digest is of the bytes, so any change to the file, a when-stamp or a
 * rationale included, breaks it, and a signature copied beside another record
 * signs other bytes. An immutable record's signature is written first (a
 * crash between the two leaves a signature without its record, which the
 * next write replaces); a mutable one's (the trial seal) right after it.
 */
export const SIGNED_KINDS = {
  'trial-seal': 'candidates/<digest>/evidence_seal.json',
  promotion: 'promotions/<id>.json',
  rollover: 'rollovers/<id>.json',
  'rollback-execution': 'rollbacks/RBX-….json',
  'rollback-approval': 'rollbacks/approvals/RBX-….json',
  'release-receipt': 'releases/receipts/<scope>/<sha256>.json (every applied one)',
  'signing-start': 'signing/start.json',
  'signers-change': 'signing/signers/<seq>.json',
  'state-change': 'signing/chain/<sha256>.json',
} as const;
export type SignedKind = keyof typeof SIGNED_KINDS;

export function signatureFile(file: string): string {
  return `${file}.sig`;
}

export function readSignature(ctx: KindContext, file: string): string | null {
  const bytes = readBytes(ctx.guard, signatureFile(file));
  return bytes ? bytes.toString('utf8') : null;
}

function text(ctx: KindContext, file: string, schema: SchemaName, value: unknown): string {
  const data = serialize(schema, value, ctx.guard.relative(file));
  if (typeof data !== 'string')
    throw new Error(`internal: ${ctx.guard.relative(file)} is written in pieces and cannot be signed`);
  return data;
}

/** Under the lock: an immutable record, signed first when this store signs. */
export function createSigned(
  ctx: KindContext,
  file: string,
  schema: SchemaName,
  value: unknown,
  kind: SignedKind,
): void {
  if (ctx.signer && !exists(file))
    ctx.writer.replace(signatureFile(file), ctx.signer(kind, sha256Hex(text(ctx, file, schema, value))));
  ctx.writer.createDocument(file, schema, value);
}

/** Under the lock: a mutable record (the trial seal) replaced, then its signature. */
export function replaceSigned(
  ctx: KindContext,
  file: string,
  schema: SchemaName,
  value: unknown,
  kind: SignedKind,
): void {
  ctx.writer.replaceDocument(file, schema, value);
  if (ctx.signer) ctx.writer.replace(signatureFile(file), ctx.signer(kind, sha256Hex(text(ctx, file, schema, value))));
}

/**
 * The public key (SSH wire form) a record's signature carries, whether or not it verifies (null: unsigned, or
 * unreadable).
 */
export function signingKeyOf(ctx: KindContext, file: string): Buffer | null {
  const armored = readSignature(ctx, file);
  const sig = armored === null ? null : parseSignature(armored);
  return sig === null || typeof sig === 'string' ? null : sig.publicKey;
}
