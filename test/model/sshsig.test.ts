import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {parseAllowedSigners} from '../../src/model/signing/allowed-signers.js';
import {actsAs, checkSignature} from '../../src/model/signing/signature-check.js';
import {signedMessage} from '../../src/model/signing/sshsig.js';
import {tempDir} from '../helpers/tree.js';

/**
 * The in-process verifier against `ssh-keygen -Y verify` on the same
 * inputs: keys the test generates (Ed25519 and RSA), signatures ssh-keygen
 * makes, allowed_signers lines with the options ssh-keygen knows. Every case
 * must get the same verdict from both.
 */
let dir: string;
const keys: Record<string, string> = {};

function keygen(name: string, type: string): void {
  const file = path.join(dir, name);
  const r = spawnSync(
    'ssh-keygen',
    ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '2048'] : []), '-N', '', '-C', name, '-f', file],
    {encoding: 'utf8'},
  );
  if (r.status !== 0) throw new Error(r.stderr);
  keys[name] = fs.readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
}
function sign(name: string, message: Buffer, namespace = 'autoctx'): string {
  const r = spawnSync('ssh-keygen', ['-Y', 'sign', '-n', namespace, '-f', path.join(dir, name)], {input: message});
  if (r.status !== 0) throw new Error(r.stderr.toString());
  return r.stdout.toString();
}
function sshVerify(allowed: string, principal: string, sig: string, message: Buffer, at: Date): boolean {
  const a = path.join(dir, `allowed-${Math.random()}`);
  const s = path.join(dir, `sig-${Math.random()}`);
  fs.writeFileSync(a, allowed);
  fs.writeFileSync(s, sig);
  const stamp = at.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const r = spawnSync(
    'ssh-keygen',
    ['-Y', 'verify', '-f', a, '-I', principal, '-n', 'autoctx', '-s', s, `-Overify-time=${stamp}`],
    {input: message, env: {...process.env, TZ: 'UTC'}},
  );
  return r.status === 0;
}
function ours(allowed: string, principal: string, sig: string, message: Buffer, at: Date): boolean {
  const check = checkSignature(parseAllowedSigners(allowed, 'allowed_signers'), sig, message, at.getTime());
  return actsAs(check, principal);
}

beforeAll(() => {
  dir = tempDir('autoctx-sshsig-');
  keygen('alice', 'ed25519');
  keygen('bob', 'rsa');
  keygen('mallory', 'ed25519');
});

describe('the in-process SSH signature verifier agrees with ssh-keygen -Y verify', () => {
  it('on valid and invalid signatures, keys, principals, namespaces and validity windows', () => {
    const message = signedMessage('promotion', 'a'.repeat(64));
    const other = signedMessage('promotion', 'b'.repeat(64));
    const now = new Date('2026-12-02T12:00:00Z');
    const alice = sign('alice', message);
    const bob = sign('bob', message);
    const mallory = sign('mallory', message);
    const git = sign('alice', message, 'git');
    // One bit of the signature value (the blob's last bytes) flipped, re-armored.
    const blob = Buffer.from(alice.split('\n').slice(1, -2).join(''), 'base64');
    blob[blob.length - 5]! ^= 1;
    const flipped =
      `-----BEGIN SSH SIGNATURE-----\n${blob.toString('base64').replace(/.{70}/g, '$&\n')}` +
      `\n-----END SSH SIGNATURE-----\n`;
    expect(flipped).not.toBe(alice);
    const lines = {
      plain: `alice@x ${keys.alice}\nbob@x ${keys.bob}\n`,
      namespaced: `alice@x namespaces="autoctx,autoctx-approver" ${keys.alice}\n`,
      gitOnly: `alice@x namespaces="git" ${keys.alice}\n`,
      expired: `alice@x valid-before="20261201Z" ${keys.alice}\n`,
      future: `alice@x valid-after="20270101Z" ${keys.alice}\n`,
      window: `alice@x valid-after="20261101Z",valid-before="20261231235959Z" ${keys.alice}\n`,
      wildcard: `*@x ${keys.alice}\n`,
      rotated: `alice@x valid-before="20261201Z" ${keys.mallory}\nalice@x valid-after="20261201Z" ${keys.alice}\n`,
    };
    const cases: Array<[string, string, string, string, Buffer, Date]> = [
      ['ed25519, valid', lines.plain, 'alice@x', alice, message, now],
      ['rsa, valid', lines.plain, 'bob@x', bob, message, now],
      ['another message', lines.plain, 'alice@x', alice, other, now],
      ['another principal', lines.plain, 'bob@x', alice, message, now],
      ['a key not listed', lines.plain, 'alice@x', mallory, message, now],
      ['the git namespace', lines.plain, 'alice@x', git, message, now],
      ['a flipped signature byte', lines.plain, 'alice@x', flipped, message, now],
      ['namespaces lists autoctx', lines.namespaced, 'alice@x', alice, message, now],
      ['namespaces lists only git', lines.gitOnly, 'alice@x', alice, message, now],
      ['valid-before passed', lines.expired, 'alice@x', alice, message, now],
      ['valid-before not yet passed', lines.expired, 'alice@x', alice, message, new Date('2026-11-30T00:00:00Z')],
      ['valid-after not reached', lines.future, 'alice@x', alice, message, now],
      ['inside the window', lines.window, 'alice@x', alice, message, now],
      ['a wildcard principal', lines.wildcard, 'carol@x', alice, message, now],
      ['a wildcard that does not match', lines.wildcard, 'carol@y', alice, message, now],
      ['a rotated-out key after its valid-before', lines.rotated, 'alice@x', mallory, message, now],
      ['the rotated-in key', lines.rotated, 'alice@x', alice, message, now],
    ];
    const verdicts = cases.map(([label, allowed, principal, sig, msg, at]) => [
      label,
      sshVerify(allowed, principal, sig, msg, at),
      ours(allowed, principal, sig, msg, at),
    ]);
    for (const [label, theirs, mine] of verdicts) expect([label, mine]).toEqual([label, theirs]);
    // Both kinds of verdict occur, so the comparison means something.
    expect(new Set(verdicts.map((v) => v[1]))).toEqual(new Set([true, false]));
    expect(verdicts.filter((v) => v[1]).map((v) => v[0])).toEqual([
      'ed25519, valid',
      'rsa, valid',
      'namespaces lists autoctx',
      'valid-before not yet passed',
      'inside the window',
      'a wildcard principal',
      'the rotated-in key',
    ]);
  });

  it('refuses what ssh-keygen refuses in an allowed_signers file: unknown options, a bad key, a bad time', () => {
    for (const bad of [
      `alice@x approver ${'ssh-ed25519 AAAA'}`,
      'alice@x ssh-ed25519',
      `alice@x valid-after="2026" ` +
        `${'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9ZcxPA0DpdvbcRSeyH/5xIBNsDsyVu2vNPA+qHdybV'}`,
      'alice@x ssh-ed25519 !!!',
    ]) {
      expect(() => parseAllowedSigners(bad, 'allowed_signers')).toThrow(
        expect.objectContaining({code: 'INVALID_INPUT'}),
      );
    }
  });
});
