import {sha256Hex} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {readDocument} from '../../documents.js';
import {listDir, readBytes} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import {createSigned} from './signatures.js';

/**
 * The scenario's signing history (autoctx additions): `allowed_signers`
 * beside the scenario's mirrors, `context_bundles/signing/start.json` (the
 * version signing starts with, and the records made before it, by digest)
 * and `signing/signers/<seq>.json` (each later version, signed by a principal
 * of the one before). Each is signed (`<file>.sig`).
 */
export const START_SCHEMA = 'signing-start' as const;
export const CHANGE_SCHEMA = 'signers-change' as const;

export interface SigningStart {
  schema_version: 1;
  scenario: string;
  allowed_signers: string;
  allowed_signers_sha256: string;
  actor: string;
  started_at: string;
  unsigned: Array<{file: string; sha256: string}>;
}

export interface SignersChange {
  schema_version: 1;
  seq: number;
  scenario: string;
  previous_sha256: string;
  allowed_signers: string;
  allowed_signers_sha256: string;
  actor: string;
  changed_at: string;
}

export function readAllowedSignersText(ctx: KindContext): string | null {
  const bytes = readBytes(ctx.guard, ctx.paths.allowedSigners);
  return bytes ? bytes.toString('utf8') : null;
}

export function readSigningStart(ctx: KindContext): SigningStart | null {
  return readDocument<SigningStart>(ctx.guard, ctx.paths.signingStart, START_SCHEMA, (v) => {
    const s = v as unknown as SigningStart;
    if (s.scenario !== ctx.scenario) fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(s.scenario)}`);
    if (sha256Hex(s.allowed_signers) !== s.allowed_signers_sha256)
      fail('DIGEST_MISMATCH', 'allowed_signers_sha256 is not the digest of the allowed_signers it holds');
    return s;
  });
}

export function listChangeSeqs(ctx: KindContext): number[] {
  return listDir(ctx.guard, ctx.paths.signersChangesDir)
    .filter((e) => e.isFile() && /^\d{6}\.json$/.test(e.name))
    .map((e) => Number(e.name.slice(0, 6)))
    .sort((a, b) => a - b);
}

export function readSignersChange(ctx: KindContext, seq: number): SignersChange | null {
  return readDocument<SignersChange>(ctx.guard, ctx.paths.signersChange(seq), CHANGE_SCHEMA, (v) => {
    const c = v as unknown as SignersChange;
    if (c.seq !== seq) fail('DIGEST_MISMATCH', `says it is change ${c.seq} but is stored as ${seq}`);
    if (c.scenario !== ctx.scenario) fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(c.scenario)}`);
    if (sha256Hex(c.allowed_signers) !== c.allowed_signers_sha256)
      fail('DIGEST_MISMATCH', 'allowed_signers_sha256 is not the digest of the allowed_signers it holds');
    return c;
  });
}

/** Under the lock: the start record (signed), then the file it starts with. */
export function writeSigningStart(ctx: KindContext, s: SigningStart): void {
  createSigned(ctx, ctx.paths.signingStart, START_SCHEMA, s, 'signing-start');
  ctx.writer.replace(ctx.paths.allowedSigners, s.allowed_signers);
}

/** Under the lock: the change (signed by a principal of the version before), then the file. */
export function writeSignersChange(ctx: KindContext, c: SignersChange): void {
  createSigned(ctx, ctx.paths.signersChange(c.seq), CHANGE_SCHEMA, c, 'signers-change');
  ctx.writer.replace(ctx.paths.allowedSigners, c.allowed_signers);
}
