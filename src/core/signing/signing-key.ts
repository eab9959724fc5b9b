import {spawnSync} from 'node:child_process';
import {createPublicKey} from 'node:crypto';
import path from 'node:path';
import {fail} from '../../errors.js';
import {NAMESPACE, signedMessage} from '../../model/signing/sshsig.js';
import {readUserConfig} from '../../store/io/user-config.js';
import {readInputText} from '../../store/io/inputs.js';

/**
 * The signing key (ARCHITECTURE §10.3): --signing-key, else
 * $AUTOCTX_SIGNING_KEY, else the user's configured `signing_key`. An
 * unencrypted private key file (Ed25519 or RSA), or a public key file whose
 * private half an ssh-agent holds. Signing goes through `ssh-keygen -Y
 * sign`, never with a prompt: an encrypted key is refused before anything is
 * written.
 */
export interface SigningKey {
  file: string;
  /** A .pub file: ssh-keygen signs through $SSH_AUTH_SOCK. */
  agent: boolean;
}

export function resolveSigningKey(given: string | undefined, env: NodeJS.ProcessEnv = process.env): SigningKey | null {
  const file = given ?? env.AUTOCTX_SIGNING_KEY ?? readUserConfig(env).signing_key;
  if (file === undefined || file === '') return null;
  return checkSigningKey(path.resolve(file), env);
}

/** Whether a private key file is protected by a passphrase (OpenSSH or PEM form). */
export function encryptedKey(text: string): boolean {
  if (/Proc-Type:\s*4,ENCRYPTED/.test(text) || text.includes('BEGIN ENCRYPTED PRIVATE KEY')) return true;
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(text);
  if (!m) return false;
  const blob = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
  const magic = 'openssh-key-v1\0';
  if (blob.subarray(0, magic.length).toString('latin1') !== magic) return false;
  const len = blob.readUInt32BE(magic.length);
  return blob.subarray(magic.length + 4, magic.length + 4 + len).toString('latin1') !== 'none';
}

export function checkSigningKey(file: string, env: NodeJS.ProcessEnv = process.env): SigningKey {
  const text = readInputText(file);
  if (/^(ssh-ed25519|ssh-rsa) [A-Za-z0-9+/=]+/.test(text.trim())) {
    if (!env.SSH_AUTH_SOCK)
      fail(
        'SIGNING_KEY_UNAVAILABLE',
        `signing key ${file} is a public key, and no ssh-agent is reachable ($SSH_AUTH_SOCK is unset) to ` +
          `sign with its private half`,
        {file},
      );
    return {file, agent: true};
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text))
    fail('INVALID_INPUT', `signing key ${file} is neither an SSH private key nor a public key`, {file});
  if (encryptedKey(text))
    fail(
      'SIGNING_KEY_ENCRYPTED',
      `signing key ${file} is protected by a passphrase; autoctx never prompts: load it into ssh-agent and ` +
        `give its .pub file, or use an unencrypted key kept for signing`,
      {file},
    );
  return {file, agent: false};
}

/**
 * The detached signature of `autoctx-sig-v1\n<kind>\n<digest>\n` (namespace autoctx), armored, as ssh-keygen writes it.
 */
export function signDigest(
  key: SigningKey,
  kind: string,
  digest: string,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const childEnv: NodeJS.ProcessEnv = {
    PATH: env.PATH,
    HOME: env.HOME,
    SSH_ASKPASS_REQUIRE: 'never',
    ...(key.agent && env.SSH_AUTH_SOCK ? {SSH_AUTH_SOCK: env.SSH_AUTH_SOCK} : {}),
  };
  const r = spawnSync('ssh-keygen', ['-Y', 'sign', '-n', NAMESPACE, '-f', key.file], {
    input: signedMessage(kind, digest),
    env: childEnv,
    timeout: 15_000,
    maxBuffer: 1 << 20,
  });
  if (r.error)
    fail(
      'SIGNING_FAILED',
      `ssh-keygen could not be run to sign ` +
        `(${(r.error as NodeJS.ErrnoException).code ?? r.error.message}); install OpenSSH's ssh-keygen`,
    );
  const out = r.stdout.toString('utf8');
  if (r.status !== 0 || !out.startsWith('-----BEGIN SSH SIGNATURE-----'))
    fail(
      'SIGNING_FAILED',
      `ssh-keygen -Y sign failed with ${key.file}: ` +
        `${r.stderr.toString('utf8').trim().split('\n').pop() ?? `exit ${r.status}`}`,
      {file: key.file},
    );
  return out;
}

/**
 * The public key (SSH wire form) of a signing key: from the .pub file, the OpenSSH private key's header, or a PEM key.
 */
export function publicKeyOf(key: SigningKey): Buffer {
  const text = readInputText(key.file);
  if (key.agent) return Buffer.from(text.trim().split(/\s+/)[1]!, 'base64');
  const m = /-----BEGIN OPENSSH PRIVATE KEY-----([\s\S]*?)-----END OPENSSH PRIVATE KEY-----/.exec(text);
  if (m) {
    const blob = Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64');
    let at = 'openssh-key-v1\0'.length;
    const str = () => {
      const len = blob.readUInt32BE(at);
      const out = blob.subarray(at + 4, at + 4 + len);
      at += 4 + len;
      return out;
    };
    str(); // cipher
    str(); // kdf
    str(); // kdf options
    at += 4; // number of keys
    return Buffer.from(str());
  }
  const jwk = createPublicKey(text).export({format: 'jwk'}) as {
    kty: string;
    n?: string;
    e?: string;
    crv?: string;
    x?: string;
  };
  const s = (b: Buffer) =>
    Buffer.concat([Buffer.from([b.length >>> 24, (b.length >>> 16) & 255, (b.length >>> 8) & 255, b.length & 255]), b]);
  const mpint = (b64: string) => {
    const b = Buffer.from(b64, 'base64url');
    return s(b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
  };
  if (jwk.kty === 'RSA') return Buffer.concat([s(Buffer.from('ssh-rsa')), mpint(jwk.e!), mpint(jwk.n!)]);
  if (jwk.kty === 'OKP' && jwk.crv === 'Ed25519')
    return Buffer.concat([s(Buffer.from('ssh-ed25519')), s(Buffer.from(jwk.x!, 'base64url'))]);
  fail('INVALID_INPUT', `signing key ${key.file} is neither Ed25519 nor RSA`, {file: key.file});
}
