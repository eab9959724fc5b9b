import {spawnSync} from 'node:child_process';
import {createHash} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {rollback} from '../../src/core/rollback.js';
import {rollbackApprove} from '../../src/core/rollback-records.js';
import {loadTrust} from '../../src/core/trust.js';
import {signatureProblems, signedRecords} from '../../src/core/verify-signatures.js';
import {verify} from '../../src/core/verify.js';
import {KnowledgeStore} from '../../src/store/index.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {cliIn, copyTree, mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

/**
 * Keys that make approvals and evidence real (issue 18 §3): a signed tree,
 * its anchor kept outside it, and every attack the issue names, each caught
 * by verify or refused by the command.
 */
let t: Tree;
let keys: string;
/** A signed tree: v1 (baseline), v2 (a, promoted, declares v1), signing started by alice before the promotion. */
let signed: string;
let anchor: string;
let a: string;
const CB = 'demo/context_bundles';

function keygen(name: string, extra: string[] = []): string {
  const file = path.join(keys, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file, ...extra], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(r.stderr);
  return fs.readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
}
const cli = cliIn;
const must = mustIn;
const copy = (from: string, label: string) => copyTree(from, 'autoctx-signed', label);
const key = (name: string) => path.join(keys, name);
const errorsOf = (knowledge: string, anchored = true) => verify({knowledge, allowedSigners: anchored ? anchor : undefined}).errors.map((e) => `${e.code} ${e.file.replace(`${CB}/`, '')}`);
const sign = (name: string, kind: string, file: string) => {
  const digest = createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  const r = spawnSync('ssh-keygen', ['-Y', 'sign', '-n', 'autoctx', '-f', key(name)], {input: `autoctx-sig-v1\n${kind}\n${digest}\n`});
  fs.writeFileSync(`${file}.sig`, r.stdout);
};

beforeAll(() => {
  keys = tempDir('autoctx-keys-');
  const alice = keygen('alice');
  const bob = keygen('bob');
  keygen('mallory');
  anchor = path.join(keys, 'allowed_signers');
  fs.writeFileSync(anchor, `alice@x namespaces="autoctx" ${alice}\nbob@x namespaces="autoctx,autoctx-approver" ${bob}\n`);
  t = makeTree();
  a = t.propose('better', {'playbook/playbook.md': 'Be helpful and precise.\n', 'routing_config/roles.json': '{"model_competitor": "small"}'});
  must(t.knowledge, ['release', 'name', 'v1', t.baseline]);
  const started = must(t.knowledge, ['signing', 'start', '--from', anchor, '--signing-key', key('alice'), '--actor', 'alice@x']);
  expect(resultSchemaProblem('result-signing-start', started)).toBeNull();
  must(t.knowledge, ['confirm', a, ...evalArgs(['--signing-key', key('alice')])], 0, fakeEnv(t.dir));
  must(t.knowledge, ['release', 'name', 'v2', a, '--rollback-target', 'v1']);
  must(t.knowledge, ['promote', a, '--signing-key', key('alice'), '--allowed-signers', anchor]);
  signed = t.knowledge;
}, 180_000);

describe('a signed tree', () => {
  it('signs the trial seal and the promotion record, and verify accepts it against the anchor; without one it says the tree is self-anchored', () => {
    for (const f of [`candidates/${a}/evidence_seal.json.sig`]) expect(fs.existsSync(path.join(signed, CB, f))).toBe(true);
    const promotions = fs.readdirSync(path.join(signed, CB, 'promotions'));
    expect(promotions.filter((f) => f.endsWith('.sig'))).toHaveLength(1);
    expect(errorsOf(signed)).toEqual([]);
    const self = verify({knowledge: signed});
    expect([self.errors, self.notes.map((n) => n.code)]).toEqual([[], ['SELF_ANCHORED']]);
    expect(verify({knowledge: signed, allowedSigners: anchor}).notes).toEqual([]);
  });

  it('an emergency rollback signed by its executor, approved by the second signer with the approver role; the executor and a key without the role are refused', () => {
    const k = copy(signed, 'emergency');
    const r = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice@x', '--signing-key', key('alice')]);
    expect(fs.existsSync(path.join(k, CB, 'rollbacks', `${r.execution_key}.json.sig`))).toBe(true);
    const before = treeHash(k);
    const self = cli(k, ['rollback', 'approve', r.execution_key, '--actor', 'alice@x', '--signing-key', key('alice'), '--allowed-signers', anchor]);
    expect([self.status, self.json.error.code]).toEqual([2, 'SIGNER_NOT_ACTOR']);
    const stranger = cli(k, ['rollback', 'approve', r.execution_key, '--actor', 'bob@x', '--signing-key', key('mallory'), '--allowed-signers', anchor]);
    expect([stranger.status, stranger.json.error.code]).toEqual([2, 'SIGNER_NOT_ACTOR']);
    const unsignedApproval = cli(k, ['rollback', 'approve', r.execution_key, '--actor', 'bob@x']);
    expect([unsignedApproval.status, unsignedApproval.json.error.code]).toEqual([2, 'SIGNING_KEY_REQUIRED']);
    expect(treeHash(k)).toBe(before);
    must(k, ['rollback', 'approve', r.execution_key, '--actor', 'bob@x', '--signing-key', key('bob'), '--allowed-signers', anchor]);
    expect(must(k, ['rollback', 'show', r.execution_key]).view.status).toBe('APPROVED');
    expect(errorsOf(k)).toEqual([]);
  });

  it('one key listed under two principals cannot approve its own emergency rollback: the approver must be a different KEY; a forged approval signed so is APPROVAL_MISMATCH', () => {
    const k = copy(signed, 'one-key');
    const alice = fs.readFileSync(`${key('alice')}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
    const next = path.join(path.dirname(k), 'signers.next');
    fs.writeFileSync(next, `${fs.readFileSync(anchor, 'utf8')}alice-approver@x namespaces="autoctx,autoctx-approver" ${alice}\n`);
    must(k, ['signing', 'signers', '--from', next, '--signing-key', key('alice'), '--actor', 'alice@x', '--allowed-signers', anchor]);
    const r = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice@x', '--signing-key', key('alice')]);
    const before = treeHash(k);
    const same = cli(k, ['rollback', 'approve', r.execution_key, '--actor', 'alice-approver@x', '--signing-key', key('alice'), '--allowed-signers', next]);
    expect([same.status, same.json.error.code, same.stdout.trim().split('\n').length]).toEqual([3, 'APPROVER_MUST_DIFFER', 1]);
    expect(treeHash(k)).toBe(before);
    // Written by hand and signed by that key in the approver's name: verify and every reader refuse it.
    const record = path.join(k, CB, 'rollbacks', `${r.execution_key}.json`);
    const approval = path.join(k, CB, 'rollbacks/approvals', `${r.execution_key}.json`);
    fs.mkdirSync(path.dirname(approval), {recursive: true});
    fs.writeFileSync(approval, `${JSON.stringify({schema_version: 1, execution_key: r.execution_key, execution_sha256: createHash('sha256').update(fs.readFileSync(record)).digest('hex'), approved_by: 'alice-approver@x', approved_at: new Date().toISOString().replace('Z', '000+00:00')}, null, 2)}\n`);
    sign('alice', 'rollback-approval', approval);
    expect(verify({knowledge: k, allowedSigners: next}).errors.map((e) => `${e.code} ${e.file.replace(`${CB}/`, '')}`)).toEqual([`APPROVAL_MISMATCH rollbacks/approvals/${r.execution_key}.json`]);
    expect(cli(k, ['rollback', 'show', r.execution_key]).status).toBe(8);
    // Bob's key approves.
    fs.rmSync(approval);
    fs.rmSync(`${approval}.sig`);
    must(k, ['rollback', 'approve', r.execution_key, '--actor', 'bob@x', '--signing-key', key('bob'), '--allowed-signers', next]);
    expect(verify({knowledge: k, allowedSigners: next}).errors).toEqual([]);
  });

  it('an approver whose clock is a day behind the executor\'s, in a signed tree: the signed approval stands against the anchor, with a CLOCK_SKEW note (injected clocks)', async () => {
    const k = copy(signed, 'skew');
    const t0 = new Date(Date.now() + 60_000);
    const r = await rollback({knowledge: k, rationale: 'stop', emergency: true, actor: 'alice@x', signingKey: key('alice'), now: () => t0});
    await rollbackApprove({knowledge: k, key: r.execution_key, actor: 'bob@x', signingKey: key('bob'), allowedSigners: anchor, now: () => new Date(t0.getTime() - 86_400_000)});
    const v = verify({knowledge: k, allowedSigners: anchor});
    expect([v.errors, v.notes.map((n) => n.code)]).toEqual([[], ['CLOCK_SKEW']]);
    expect(must(k, ['rollback', 'show', r.execution_key]).view.status).toBe('APPROVED');
  });

  it('catches a forged approval: hand-written in another actor\'s name, unsigned or signed by a key the anchor does not list', () => {
    const k = copy(signed, 'forged');
    const r = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice@x', '--signing-key', key('alice')]);
    const record = path.join(k, CB, 'rollbacks', `${r.execution_key}.json`);
    const approval = path.join(k, CB, 'rollbacks/approvals', `${r.execution_key}.json`);
    fs.mkdirSync(path.dirname(approval), {recursive: true});
    fs.writeFileSync(approval, `${JSON.stringify({schema_version: 1, execution_key: r.execution_key, execution_sha256: createHash('sha256').update(fs.readFileSync(record)).digest('hex'), approved_by: 'bob@x', approved_at: new Date().toISOString().replace('Z', '000+00:00')}, null, 2)}\n`);
    expect(errorsOf(k)).toEqual([`MISSING_SIGNATURE rollbacks/approvals/${r.execution_key}.json.sig`]);
    sign('mallory', 'rollback-approval', approval);
    expect(errorsOf(k)).toEqual([`BAD_SIGNATURE rollbacks/approvals/${r.execution_key}.json`]);
    // Signed by alice (in the anchor, but not an approver, and not bob): the actor named is not the signer's principal,
    // and the key is the one that signed the execution (a self-approval by key).
    sign('alice', 'rollback-approval', approval);
    expect(errorsOf(k)).toEqual([`APPROVAL_MISMATCH rollbacks/approvals/${r.execution_key}.json`, `SIGNER_MISMATCH rollbacks/approvals/${r.execution_key}.json`]);
    // A self-approval signed by its executor.
    fs.writeFileSync(approval, fs.readFileSync(approval, 'utf8').replace('bob@x', 'alice@x'));
    sign('alice', 'rollback-approval', approval);
    expect(errorsOf(k)).toEqual(expect.arrayContaining([`APPROVAL_MISMATCH rollbacks/approvals/${r.execution_key}.json`]));
  });

  it('catches a key added to the tree\'s allowed_signers and used to re-sign, when the anchor is given', () => {
    const k = copy(signed, 'added-key');
    const file = path.join(k, 'demo/allowed_signers');
    fs.appendFileSync(file, `mallory@x ${fs.readFileSync(`${key('mallory')}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`);
    const promotion = fs.readdirSync(path.join(k, CB, 'promotions')).find((f) => f.endsWith('.json'))!;
    sign('mallory', 'promotion', path.join(k, CB, 'promotions', promotion));
    expect(errorsOf(k)).toEqual(expect.arrayContaining(['ALLOWED_SIGNERS_MISMATCH demo/allowed_signers']));
    // Recorded as a signed change, but signed by the key it adds: not a principal of the version before it.
    fs.writeFileSync(file, fs.readFileSync(anchor));
    fs.mkdirSync(path.join(k, CB, 'signing/signers'), {recursive: true});
    const text = `${fs.readFileSync(anchor, 'utf8')}mallory@x ${fs.readFileSync(`${key('mallory')}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`;
    const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
    const change = path.join(k, CB, 'signing/signers/000001.json');
    fs.writeFileSync(change, `${JSON.stringify({schema_version: 1, seq: 1, scenario: 'demo', previous_sha256: sha(fs.readFileSync(anchor)), allowed_signers: text, allowed_signers_sha256: sha(text), actor: 'mallory@x', changed_at: '2026-12-02T12:00:00.000000+00:00'}, null, 2)}\n`);
    sign('mallory', 'signers-change', change);
    fs.writeFileSync(file, text);
    expect(errorsOf(k)).toEqual(expect.arrayContaining(['BAD_SIGNATURE signing/signers/000001.json']));
    expect(cli(k, ['promote', a, '--allowed-signers', anchor, '--signing-key', key('alice')]).status).toBe(8);
  });

  it('a change of allowed_signers signed by a principal of the version before is accepted, and the anchor still reaches it', () => {
    const k = copy(signed, 'rotated');
    const next = path.join(tempDir('autoctx-next-'), 'allowed_signers');
    fs.writeFileSync(next, `${fs.readFileSync(anchor, 'utf8')}carol@x ${fs.readFileSync(`${key('mallory')}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')}\n`);
    const r = must(k, ['signing', 'signers', '--from', next, '--signing-key', key('alice'), '--actor', 'alice@x', '--allowed-signers', anchor]);
    expect(resultSchemaProblem('result-signing-signers', r)).toBeNull();
    expect(r).toMatchObject({status: 'updated', change_seq: 1});
    expect(errorsOf(k)).toEqual([]);
    // The new key signs as carol from now on.
    must(k, ['rollback', '--rationale', 'carol rolls back', '--actor', 'carol@x', '--signing-key', key('mallory')]);
    expect(errorsOf(k)).toEqual([]);
  });

  it('catches allowed_signers deleted together with every signature and the signing history, when the anchor is given', () => {
    const k = copy(signed, 'stripped');
    fs.rmSync(path.join(k, 'demo/allowed_signers'));
    fs.rmSync(path.join(k, CB, 'signing'), {recursive: true});
    for (const f of fs.readdirSync(path.join(k, CB), {recursive: true}) as string[]) if (f.endsWith('.sig')) fs.rmSync(path.join(k, CB, f));
    const errors = errorsOf(k);
    expect(errors).toEqual(expect.arrayContaining(['MISSING_ALLOWED_SIGNERS signing/start.json']));
    expect(errors.filter((e) => e.startsWith('MISSING_SIGNATURE')).length).toBeGreaterThanOrEqual(2);
    expect(cli(k, ['promote', a, '--allowed-signers', anchor, '--signing-key', key('alice')]).status).toBe(8);
  });

  it('catches a valid signature copied onto another record, and a signed promotion record edited after signing', () => {
    const k = copy(signed, 'copied');
    const promotions = path.join(k, CB, 'promotions');
    const promotion = fs.readdirSync(promotions).find((f) => f.endsWith('.json'))!;
    const seal = path.join(k, CB, 'candidates', a, 'evidence_seal.json');
    fs.copyFileSync(path.join(promotions, `${promotion}.sig`), `${seal}.sig`);
    expect(errorsOf(k)).toEqual([`BAD_SIGNATURE candidates/${a}/evidence_seal.json`]);
    const k2 = copy(signed, 'edited');
    const file = path.join(k2, CB, 'promotions', promotion);
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/"promoted_at": "([^"]*)"/, '"promoted_at": "2026-01-01T00:00:00.000000+00:00"'));
    expect(errorsOf(k2)).toEqual(expect.arrayContaining([`BAD_SIGNATURE promotions/${promotion}`]));
  });

  it('catches a trial seal re-made by hand after a score edit, and promote refuses it (exit 8)', () => {
    const k = copy(t.knowledge, 'reseal');
    // A second candidate, confirmed and sealed under signing; then one score edited and the seal recomputed, unsigned as it must be.
    const src = path.join(tempDir('autoctx-c-'), 'c');
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), 'Be helpful, precise and brief.\n');
    fs.mkdirSync(path.join(src, 'routing_config'), {recursive: true});
    fs.writeFileSync(path.join(src, 'routing_config/roles.json'), '{"model_competitor": "small"}');
    const c = must(k, ['propose', '--from', src]).bundle_digest as string;
    // a (promoted) is the parent now; confirm c against it with the key.
    must(k, ['confirm', c, ...evalArgs(['--signing-key', key('alice')])], 0, fakeEnv(path.dirname(k)));
    const trials = path.join(k, CB, 'candidates', c, 'matched_trials.json');
    const evidence = JSON.parse(fs.readFileSync(trials, 'utf8'));
    evidence.trials[0].candidate_score += 0.125;
    fs.writeFileSync(trials, `${JSON.stringify(evidence, null, 2)}\n`);
    const seal = path.join(k, CB, 'candidates', c, 'evidence_seal.json');
    const stored = JSON.parse(fs.readFileSync(seal, 'utf8'));
    // Whatever the forger computes, the seal's bytes change, and the signature is over the old bytes.
    fs.writeFileSync(seal, `${JSON.stringify({...stored, sealed_at: '2026-12-02T12:00:00.000000+00:00'}, null, 2)}\n`);
    expect(errorsOf(k)).toEqual(expect.arrayContaining([`BAD_SIGNATURE candidates/${c}/evidence_seal.json`]));
    const before = treeHash(k);
    const r = cli(k, ['promote', c, '--allowed-signers', anchor, '--signing-key', key('alice')]);
    expect([r.status, r.json.error.code]).toEqual([8, 'INTEGRITY']);
    expect(treeHash(k)).toBe(before);
  });

  it('signs through ssh-agent with a .pub file, the private key never on disk for autoctx, never a prompt', () => {
    const k = copy(signed, 'agent');
    const agent = spawnSync('ssh-agent', ['-s'], {encoding: 'utf8'});
    const sock = /SSH_AUTH_SOCK=([^;]+);/.exec(agent.stdout)![1]!;
    const pid = /SSH_AGENT_PID=(\d+);/.exec(agent.stdout)![1]!;
    try {
      const env = {SSH_AUTH_SOCK: sock};
      expect(spawnSync('ssh-add', [key('alice')], {env: {...process.env, ...env}, encoding: 'utf8'}).status).toBe(0);
      const r = must(k, ['rollback', '--rationale', 'through the agent', '--actor', 'alice@x', '--signing-key', `${key('alice')}.pub`], 0, env);
      expect(fs.existsSync(path.join(k, CB, 'rollbacks', `${r.execution_key}.json.sig`))).toBe(true);
      expect(errorsOf(k)).toEqual([]);
      // Without an agent, a .pub key is refused before anything is written.
      const before = treeHash(k);
      const none = cli(k, ['rollback', '--rationale', 'no agent', '--actor', 'alice@x', '--signing-key', `${key('alice')}.pub`], {SSH_AUTH_SOCK: ''});
      expect([none.status, none.json.error.code]).toEqual([2, 'SIGNING_KEY_UNAVAILABLE']);
      expect(treeHash(k)).toBe(before);
    } finally {
      process.kill(Number(pid));
    }
  });

  it('a signing key that is encrypted, missing, or none at all is refused before anything is written (exit 2); a malformed allowed_signers too', () => {
    const k = copy(signed, 'keys');
    keygen('locked', ['-N', 'secret']);
    const before = treeHash(k);
    const cases: Array<[string[], string]> = [
      [['rollback', '--rationale', 'r', '--actor', 'alice@x', '--signing-key', key('locked')], 'SIGNING_KEY_ENCRYPTED'],
      [['rollback', '--rationale', 'r', '--actor', 'alice@x', '--signing-key', key('nobody')], 'INPUT_NOT_FOUND'],
      [['rollback', '--rationale', 'r', '--actor', 'alice@x'], 'SIGNING_KEY_REQUIRED'],
      [['rollback', '--rationale', 'r', '--actor', 'bob@x', '--signing-key', key('alice')], 'SIGNER_NOT_ACTOR'],
    ];
    const bad = path.join(keys, 'bad_signers');
    fs.writeFileSync(bad, 'alice@x approver ssh-ed25519 AAAA\n');
    cases.push([['verify', '--allowed-signers', bad], 'INVALID_INPUT']);
    cases.push([['rollback', '--rationale', 'r', '--actor', 'alice@x', '--signing-key', key('alice'), '--allowed-signers', bad], 'INVALID_INPUT']);
    for (const [args, code] of cases) {
      const r = cli(k, args, {AUTOCTX_SIGNING_KEY: ''});
      expect([args.join(' '), r.status, r.json.error.code, r.stdout.trim().split('\n').length]).toEqual([args.join(' '), 2, code, 1]);
      expect(treeHash(k)).toBe(before);
    }
  });

  it('an anchor inside the knowledge root (given, from the environment, or through a link) is refused before anything is read or written', () => {
    const k = copy(signed, 'anchor-inside');
    const inTree = path.join(k, 'demo/extra_signers');
    fs.copyFileSync(anchor, inTree);
    const link = path.join(path.dirname(k), 'outside-link');
    fs.symlinkSync(path.join(k, CB, '..', 'allowed_signers'), link);
    const before = treeHash(k);
    const commands = [
      ['verify'],
      ['promote', a, '--signing-key', key('alice')],
      ['rollback', '--rationale', 'r', '--actor', 'alice@x', '--signing-key', key('alice')],
      ['signing', 'signers', '--from', anchor, '--signing-key', key('alice'), '--actor', 'alice@x'],
    ];
    for (const file of [path.join(k, 'demo/allowed_signers'), inTree, link, path.join(k, 'demo', '..', 'demo', 'extra_signers')]) {
      for (const args of commands) {
        for (const [extra, env] of [[['--allowed-signers', file], {}], [[], {AUTOCTX_ALLOWED_SIGNERS: file}]] as Array<[string[], NodeJS.ProcessEnv]>) {
          const r = cli(k, [...args, ...extra], {AUTOCTX_SIGNING_KEY: '', ...env});
          expect([file, args[0], r.status, r.json?.error?.code]).toEqual([file, args[0], 2, 'INPUT_UNSAFE']);
          expect(r.json.error.message).toMatch(/inside the knowledge root/);
        }
      }
    }
    expect(treeHash(k)).toBe(before);
    // The same file outside the root is the anchor it always was.
    expect(cli(k, ['verify', '--allowed-signers', anchor]).status).toBe(0);
  });

  it('repair never seals trials it did not observe in a signed tree: it reports them, and the run again seals them', () => {
    const k = copy(signed, 'repair');
    const src = path.join(tempDir('autoctx-r-'), 'r');
    fs.mkdirSync(path.join(src, 'playbook'), {recursive: true});
    fs.writeFileSync(path.join(src, 'playbook/playbook.md'), 'Be helpful and kind.\n');
    fs.mkdirSync(path.join(src, 'routing_config'), {recursive: true});
    fs.writeFileSync(path.join(src, 'routing_config/roles.json'), '{"model_competitor": "small"}');
    const c = must(k, ['propose', '--from', src]).bundle_digest as string;
    const args = ['confirm', c, ...evalArgs(['--signing-key', key('alice')])];
    // Where the run writes its second seal: killed just before it, the evidence holds pairs the seal does not.
    const traced = copy(k, 'repair-trace');
    const trace = path.join(path.dirname(traced), 'trace');
    must(traced, args, 0, {...fakeEnv(path.dirname(traced)), AUTOCTX_FAULT_TRACE: trace});
    const seals = fs.readFileSync(trace, 'utf8').trim().split('\n').filter((l) => l.includes('evidence_seal.json') && !l.includes('.sig') && l.split(' ')[0]!.endsWith(':before'));
    expect(seals.length).toBeGreaterThan(1);
    expect(cli(k, args, {...fakeEnv(path.dirname(k)), AUTOCTX_FAULT: seals[1]!.split(' ')[0]!}).status).toBeNull();
    const r = must(k, ['repair']);
    expect(r.actions.filter((x: string) => x.startsWith('sealed'))).toEqual([]);
    expect(r.remaining.filter((x: string) => x.includes('does not seal what it did not observe'))).toHaveLength(1);
    must(k, args, 0, fakeEnv(path.dirname(k)));
    expect(errorsOf(k)).toEqual([]);
  });

  it('deleting any one file of a signed tree is named by verify against the anchor, but what docs/guarantees.md lists as safe to lose', () => {
    const k = copy(signed, 'deletion');
    const key = must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice@x', '--signing-key', path.join(keys, 'alice')]).execution_key;
    must(k, ['rollback', 'approve', key, '--actor', 'bob@x', '--signing-key', path.join(keys, 'bob')]);
    expect(errorsOf(k)).toEqual([]);
    // allowed_signers before its first signed change: its loss reads as a signing start cut short (SIGNING_PENDING), the checks use the history's copy.
    const safe = [/^\.gitignore$/, /^demo\/(playbook|hints)\.md$/, /^demo\/context_bundles\/rollbacks\/approvals\/RBX-\d{14}-[0-9a-f]{8}\.json$/, /^demo\/allowed_signers$/];
    const files = (fs.readdirSync(k, {recursive: true, withFileTypes: true}) as fs.Dirent[])
      .filter((e) => e.isFile())
      .map((e) => path.relative(k, path.join(e.parentPath, e.name)))
      .filter((f) => !f.startsWith('.state'));
    expect(files.filter((f) => f.endsWith('.sig')).length).toBeGreaterThanOrEqual(5);
    const missed: string[] = [];
    for (const rel of files) {
      const c = copy(k, 'deleted');
      fs.rmSync(path.join(c, rel));
      const r = verify({knowledge: c, allowedSigners: anchor});
      // A pointer move's record is named by the move it recorded (as in test/deletion/single-file.test.ts).
      const named = r.errors.some((e) => e.file === rel || e.message.includes(rel) || (/\/(promotions|rollbacks)\/[^/]+\.json$/.test(rel) && ['POINTER_NOT_RECORDED', 'HISTORY_GAP', 'ROLLBACK_NOT_SERVED'].includes(e.code)));
      if (!named && !safe.some((re) => re.test(rel)) && !(rel.includes('/rollbacks/RBX-') && JSON.parse(fs.readFileSync(path.join(k, rel), 'utf8')).status === 'REFUSED')) missed.push(rel);
      fs.rmSync(path.dirname(c), {recursive: true, force: true});
    }
    expect(missed).toEqual([]);
  }, 300_000);

  it('every byte flip of every signed document is detected by its signature, when-stamps and rationales included', () => {
    const k = copy(signed, 'flips');
    must(k, ['rollback', '--emergency', '--rationale', 'stop', '--actor', 'alice@x', '--signing-key', key('alice')]);
    const store = KnowledgeStore.open(k).scenario('demo');
    const trust = loadTrust(store, fs.readFileSync(anchor, 'utf8'));
    expect(signatureProblems(store, trust)).toEqual([]);
    const files = (fs.readdirSync(path.join(k, CB), {recursive: true}) as string[]).filter((f) => fs.existsSync(path.join(k, CB, `${f}.sig`))).map((f) => path.join(k, CB, f));
    expect(files.map((f) => path.basename(path.dirname(f)) + '/' + path.basename(f).replace(/RBX-.*/, 'RBX').replace(/^[0-9a-f]{32}/, 'ID'))).toEqual(expect.arrayContaining([`${a}/evidence_seal.json`, 'promotions/ID.json', 'rollbacks/RBX', 'signing/start.json']));
    let flips = 0;
    const missed: string[] = [];
    for (const file of files) {
      const original = fs.readFileSync(file);
      for (let i = 0; i < original.length; i++) {
        const changed = Buffer.from(original);
        changed[i]! ^= 1;
        fs.writeFileSync(file, changed);
        flips++;
        const detected = (() => {
          try {
            const records = signedRecords(store);
            // A record that no longer reads back is refused by its own reader (verify names it), before any signature.
            if (!file.endsWith('start.json') && !records.some((r) => r.file === file)) return true;
            return signatureProblems(store, loadTrust(store, fs.readFileSync(anchor, 'utf8')), records).some((p) => p.file === file);
          } catch {
            return true; // the signing history no longer reads back: its reader refuses it
          }
        })();
        if (!detected) missed.push(`${path.relative(k, file)} byte ${i}`);
      }
      fs.writeFileSync(file, original);
    }
    process.stdout.write(`signed tamper: ${flips} bytes of ${files.length} signed documents flipped, ${missed.length} undetected\n`);
    expect(missed).toEqual([]);
    expect(flips).toBeGreaterThan(2000);
  }, 300_000);
});
