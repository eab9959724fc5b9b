import {createHash, createPublicKey, verify as cryptoVerify, type KeyObject} from 'node:crypto';
import {rethrowUnless} from '../../errors.js';

/**
 * OpenSSH detached signatures (the SSHSIG format `ssh-keygen -Y sign`
 * writes, PROTOCOL.sshsig), verified in process: parsing the armored
 * signature, rebuilding the signed data and checking it with node:crypto for
 * Ed25519 and RSA (rsa-sha2-256/512) keys. No process is spawned, so verify
 * checks thousands of records quickly; the tests hold it to `ssh-keygen -Y
 * verify` on the same inputs.
 */
export const NAMESPACE = 'autoctx';
export const SIG_VERSION = 'autoctx-sig-v1';

/** The bytes every autoctx signature covers: `autoctx-sig-v1\n<kind>\n<digest>\n`. */
export function signedMessage(kind: string, digest: string): Buffer {
  return Buffer.from(`${SIG_VERSION}\n${kind}\n${digest}\n`, 'utf8');
}

export interface SshSignature {
  /** The signer's public key, in SSH wire form. */
  publicKey: Buffer;
  namespace: string;
  hashAlgorithm: 'sha256' | 'sha512';
  /** The signature algorithm named inside (ssh-ed25519, rsa-sha2-512, rsa-sha2-256). */
  algorithm: string;
  signature: Buffer;
}

/** What a Reader throws when the blob ends before the field it reads. */
class Truncated extends Error {}
const isTruncated = (error: unknown): boolean => error instanceof Truncated;
/** What node:crypto throws for a key or a signature it cannot use (by code, across realms). */
const isCryptoRefusal = (error: unknown): boolean =>
  /^ERR_(OSSL|CRYPTO)_/.test(String((error as {code?: unknown} | null)?.code));

class Reader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}
  bytes(n: number): Buffer {
    if (this.at + n > this.buf.length) throw new Truncated('truncated');
    const out = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
  u32(): number {
    return this.bytes(4).readUInt32BE(0);
  }
  string(): Buffer {
    return this.bytes(this.u32());
  }
  text(): string {
    return this.string().toString('latin1');
  }
  done(): boolean {
    return this.at === this.buf.length;
  }
}

function sshString(b: Buffer | string): Buffer {
  const data = typeof b === 'string' ? Buffer.from(b, 'utf8') : b;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length, 0);
  return Buffer.concat([len, data]);
}

const ARMOR = /^-----BEGIN SSH SIGNATURE-----\r?\n([A-Za-z0-9+/=\r\n]+?)\r?\n?-----END SSH SIGNATURE-----\r?\n?$/;

/** The armored signature parsed, or a sentence saying what is wrong with it. */
export function parseSignature(armored: string): SshSignature | string {
  const m = ARMOR.exec(armored);
  if (!m) return 'not an armored SSH signature';
  try {
    const r = new Reader(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'));
    if (r.bytes(6).toString('latin1') !== 'SSHSIG') return 'not an SSHSIG blob';
    if (r.u32() !== 1) return 'an SSHSIG version other than 1';
    const publicKey = Buffer.from(r.string());
    const namespace = r.text();
    r.string(); // reserved
    const hash = r.text();
    if (hash !== 'sha256' && hash !== 'sha512') return `an unknown hash algorithm ${JSON.stringify(hash)}`;
    const inner = new Reader(r.string());
    if (!r.done()) return 'trailing bytes after the signature';
    const algorithm = inner.text();
    const signature = Buffer.from(inner.string());
    return {publicKey, namespace, hashAlgorithm: hash, algorithm, signature};
  } catch (error) {
    rethrowUnless(error, isTruncated);
    return 'a truncated SSHSIG blob';
  }
}

/** The data an SSHSIG signature signs: the magic, namespace, reserved, hash name and the message's hash. */
function signedData(sig: SshSignature, message: Buffer): Buffer {
  const h = createHash(sig.hashAlgorithm).update(message).digest();
  return Buffer.concat([
    Buffer.from('SSHSIG', 'latin1'),
    sshString(sig.namespace),
    sshString(''),
    sshString(sig.hashAlgorithm),
    sshString(h),
  ]);
}

function b64url(b: Buffer): string {
  return b.toString('base64').replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
}

/** An mpint without its sign byte, for JWK. */
function unsigned(b: Buffer): Buffer {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}

const keyCache = new Map<string, KeyObject | null>();

/** A public key in SSH wire form as a node:crypto key (Ed25519 or RSA), or null for another type. */
export function publicKeyObject(wire: Buffer): KeyObject | null {
  const id = wire.toString('base64');
  const cached = keyCache.get(id);
  if (cached !== undefined) return cached;
  let key: KeyObject | null = null;
  try {
    const r = new Reader(wire);
    const type = r.text();
    if (type === 'ssh-ed25519') {
      const x = r.string();
      if (x.length === 32 && r.done())
        key = createPublicKey({key: {kty: 'OKP', crv: 'Ed25519', x: b64url(Buffer.from(x))}, format: 'jwk'});
    } else if (type === 'ssh-rsa') {
      const e = unsigned(Buffer.from(r.string()));
      const n = unsigned(Buffer.from(r.string()));
      if (r.done()) key = createPublicKey({key: {kty: 'RSA', n: b64url(n), e: b64url(e)}, format: 'jwk'});
    }
  } catch (error) {
    rethrowUnless(error, isTruncated, isCryptoRefusal);
    key = null;
  }
  keyCache.set(id, key);
  return key;
}

export function keyType(wire: Buffer): string | null {
  try {
    return new Reader(wire).text();
  } catch (error) {
    rethrowUnless(error, isTruncated);
    return null;
  }
}

/** Whether `sig` is a valid signature of `message` in `namespace` by the key it carries. */
export function signatureValid(sig: SshSignature, message: Buffer, namespace = NAMESPACE): boolean {
  if (sig.namespace !== namespace) return false;
  const key = publicKeyObject(sig.publicKey);
  if (!key) return false;
  const data = signedData(sig, message);
  const type = keyType(sig.publicKey);
  try {
    if (type === 'ssh-ed25519')
      return (
        sig.algorithm === 'ssh-ed25519' && sig.signature.length === 64 && cryptoVerify(null, data, key, sig.signature)
      );
    if (type === 'ssh-rsa') {
      const hash = sig.algorithm === 'rsa-sha2-512' ? 'sha512' : sig.algorithm === 'rsa-sha2-256' ? 'sha256' : null;
      return hash !== null && cryptoVerify(hash, data, key, sig.signature);
    }
  } catch (error) {
    rethrowUnless(error, isCryptoRefusal);
    return false;
  }
  return false;
}

/** The SHA256:… fingerprint ssh-keygen prints for a key. */
export function fingerprint(wire: Buffer): string {
  return `SHA256:${createHash('sha256').update(wire).digest('base64').replace(/=+$/, '')}`;
}
