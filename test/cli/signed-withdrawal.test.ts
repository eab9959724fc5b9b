import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {beforeAll, describe, expect, it} from '@jest/globals';
import {openScenario} from '../../src/core/common/store-options.js';
import {nextReceipt} from '../../src/core/release/release.js';
import {normalized, scopeView} from '../../src/core/release/registry-view.js';
import {prepareSigning} from '../../src/core/signing/signing.js';
import {verify} from '../../src/core/common/verify.js';
import {applyTransition} from '../../src/model/release/release-gate.js';
import {createReceipt} from '../../src/store/kinds/release/release-receipt.js';
import {swapRegistry} from '../../src/store/kinds/release/release-registry.js';
import {cliIn, copyTree, mustIn} from '../helpers/knowledge-cli.js';
import {evalArgs, fakeEnv, makeTree, type Tree} from '../helpers/pipeline.js';
import {tempDir, treeHash} from '../helpers/tree.js';

/**
 * A release that a command ends on its own (a rejection's withdrawal, a
 * promotion's end of a stale canary, repair's end of a rejected one) is
 * recorded under the command's one actor: its --actor, else, in a signed
 * tree, the principal of the key that signs it, never $AUTOCTX_ACTOR when
 * the key is another's. The signed tree then verifies against its anchor.
 */
let t: Tree;
let keys: string;
let anchor: string;
let v2 = '';
let v3 = '';
/** Signed by alice; v1 (the baseline) ACTIVE, v2 and v3 confirmed against it, v2 a 100% CANARY. */
let signed = '';
const key = (name: string) => path.join(keys, name);
/** Someone else in the environment: the key, not $AUTOCTX_ACTOR, names who signs. */
const BOB = {AUTOCTX_ACTOR: 'bob@y'};

function keygen(name: string): string {
  const file = path.join(keys, name);
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', file], {encoding: 'utf8'});
  if (r.status !== 0) throw new Error(r.stderr);
  return fs.readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
}

beforeAll(() => {
  keys = tempDir('autoctx-signed-withdrawal-keys-');
  anchor = path.join(keys, 'allowed_signers');
  fs.writeFileSync(anchor, `alice@x namespaces="autoctx" ${keygen('alice')}\n`);
  t = makeTree();
  v2 = t.propose('v2', {
    'playbook/playbook.md': 'Be helpful and precise.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  v3 = t.propose('v3', {
    'playbook/playbook.md': 'Be helpful, precise and kind.\n',
    'routing_config/roles.json': '{"model_competitor": "small"}',
  });
  mustIn(t.knowledge, ['signing', 'start', '--from', anchor, '--signing-key', key('alice'), '--actor', 'alice@x']);
  const k = ['--signing-key', key('alice')];
  for (const d of [v2, v3]) mustIn(t.knowledge, ['confirm', d, ...evalArgs(k)], 0, fakeEnv(t.dir));
  for (const [v, d] of [
    ['v1', t.baseline],
    ['v2', v2],
    ['v3', v3],
  ])
    mustIn(t.knowledge, ['release', 'name', v!, d!, ...k]);
  mustIn(t.knowledge, [
    'release',
    'transition',
    'v2',
    '--to',
    'SHADOW',
    '--rationale',
    's',
    '--actor',
    'alice@x',
    ...k,
  ]);
  mustIn(t.knowledge, [
    'release',
    'transition',
    'v2',
    '--to',
    'CANARY',
    '--canary-percent',
    '100',
    '--rationale',
    'all',
    '--actor',
    'alice@x',
    ...k,
  ]);
  signed = t.knowledge;
}, 240_000);

const copy = (label: string) => copyTree(signed, 'autoctx-signed-withdrawal', label);
const lastReceipt = (k: string) =>
  (mustIn(k, ['release', 'history']).receipts as Array<Record<string, unknown>>).at(-1)!;
const verified = (k: string) => verify({knowledge: k, allowedSigners: anchor}).errors.map((e) => `${e.code} ${e.file}`);
const states = (k: string) =>
  Object.fromEntries(
    mustIn(k, ['release', 'list']).scopes[0].releases.map((r: {version: string; state: string}) => [
      r.version,
      r.state,
    ]),
  );

/**
 * A canary of a rejected bundle, as an older autoctx left it: written (signed, chained) under the scenario lock by
 * alice.
 */
async function rejectedCanary(k: string): Promise<void> {
  mustIn(k, [
    'release',
    'transition',
    'v2',
    '--to',
    'DEPRECATED',
    '--rationale',
    'off',
    '--actor',
    'alice@x',
    '--signing-key',
    key('alice'),
  ]);
  mustIn(k, ['reject', v2, '--rationale', 'no', '--signing-key', key('alice')]);
  const store = openScenario({knowledge: k});
  prepareSigning(store, {signingKey: key('alice')}, {actor: 'alice@x', role: 'sign'});
  await store.withLock(5, () => {
    const view = scopeView(store, 'global');
    const registry = {
      ...view.state.registry,
      releases: {
        ...view.state.registry.releases,
        v2: {version: 'v2', state: 'SHADOW' as const, canary: null, shadow: null},
      },
    };
    const next = normalized(
      applyTransition(registry, {version: 'v2', to: 'CANARY', settings: {canary: {basis_points: null}}, deprecate: []}),
      view,
    );
    const receipt = nextReceipt(
      store,
      view.state,
      {
        action: 'transition',
        version: 'v2',
        bundle_digest: v2,
        actor: 'alice@x',
        at: '2026-01-01T00:00:00Z',
        from_state: 'SHADOW',
        requested_state: 'CANARY',
        target_state: 'CANARY',
        applied: true,
        blockers: [],
        rationale: 'old',
        deprecated_versions: [],
        promotion_id: null,
      },
      next,
    );
    createReceipt(store, receipt);
    swapRegistry(store, 'global', view.state.digest, receipt.registry!);
  });
  expect(states(k)).toMatchObject({v2: 'CANARY'});
}

describe("a release a command ends on its own is recorded under the command's actor", () => {
  it(
    "reject with alice's key while $AUTOCTX_ACTOR names bob: the " +
      'withdrawal receipt names alice, and the tree verifies',
    () => {
      const k = copy('reject');
      mustIn(k, ['reject', v2, '--rationale', 'no', '--signing-key', key('alice')], 0, BOB);
      expect(lastReceipt(k)).toMatchObject({
        version: 'v2',
        from_state: 'CANARY',
        target_state: 'DEPRECATED',
        actor: 'alice@x',
      });
      expect(verified(k)).toEqual([]);
    },
  );

  it('reject --actor: the receipt names it; one the key may not sign as is refused before anything is written', () => {
    const k = copy('reject-actor');
    const before = treeHash(k);
    const refused = cliIn(k, ['reject', v2, '--rationale', 'no', '--actor', 'bob@y', '--signing-key', key('alice')]);
    expect([refused.status, refused.json.error?.code]).toEqual([2, 'SIGNER_NOT_ACTOR']);
    expect(treeHash(k)).toBe(before);
    expect(states(k)).toMatchObject({v2: 'CANARY'});
    mustIn(k, ['reject', v2, '--rationale', 'no', '--actor', 'alice@x', '--signing-key', key('alice')], 0, BOB);
    expect(lastReceipt(k)).toMatchObject({target_state: 'DEPRECATED', actor: 'alice@x'});
    expect(verified(k)).toEqual([]);
  });

  it(
    "promote over the bundle a canary was tested against, with alice's key " +
      "while $AUTOCTX_ACTOR names bob: the stale canary's end names alice",
    () => {
      const k = copy('promote');
      mustIn(k, ['promote', v3, '--signing-key', key('alice')], 0, BOB);
      expect(lastReceipt(k)).toMatchObject({
        version: 'v2',
        from_state: 'CANARY',
        target_state: 'DEPRECATED',
        actor: 'alice@x',
      });
      expect(verified(k)).toEqual([]);
    },
  );

  it('unsigned: reject --actor and promote --actor name their actor on what they end', () => {
    const plain = path.join(tempDir('autoctx-unsigned-withdrawal-'), 'knowledge');
    const u = makeTree();
    const b = u.propose('b', {
      'playbook/playbook.md': 'Be helpful and precise.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    const c = u.propose('c', {
      'playbook/playbook.md': 'Be helpful, precise and kind.\n',
      'routing_config/roles.json': '{"model_competitor": "small"}',
    });
    for (const d of [b, c]) mustIn(u.knowledge, ['confirm', d, ...evalArgs()], 0, fakeEnv(u.dir));
    mustIn(u.knowledge, ['release', 'name', 'v2', b]);
    mustIn(u.knowledge, ['release', 'transition', 'v2', '--to', 'SHADOW', '--rationale', 's']);
    mustIn(u.knowledge, [
      'release',
      'transition',
      'v2',
      '--to',
      'CANARY',
      '--canary-percent',
      '10',
      '--rationale',
      'c',
    ]);
    fs.cpSync(u.knowledge, plain, {recursive: true});
    const viaTransition = path.join(tempDir('autoctx-unsigned-transition-'), 'knowledge');
    fs.cpSync(u.knowledge, viaTransition, {recursive: true});
    mustIn(u.knowledge, ['reject', b, '--rationale', 'no', '--actor', 'carol@z'], 0, BOB);
    expect(lastReceipt(u.knowledge)).toMatchObject({target_state: 'DEPRECATED', actor: 'carol@z'});
    mustIn(plain, ['promote', c, '--actor', 'carol@z'], 0, BOB);
    expect(lastReceipt(plain)).toMatchObject({version: 'v2', target_state: 'DEPRECATED', actor: 'carol@z'});
    // The same promotion through release transition to ACTIVE: the transition's --actor is the promotion's.
    mustIn(viaTransition, ['release', 'name', 'v3', c]);
    mustIn(viaTransition, ['release', 'transition', 'v3', '--to', 'SHADOW', '--rationale', 's']);
    mustIn(viaTransition, [
      'release',
      'transition',
      'v3',
      '--to',
      'CANARY',
      '--canary-percent',
      '10',
      '--rationale',
      'c',
    ]);
    mustIn(
      viaTransition,
      ['release', 'transition', 'v3', '--to', 'ACTIVE', '--rationale', 'go', '--actor', 'carol@z'],
      0,
      BOB,
    );
    const history = mustIn(viaTransition, ['release', 'history']).receipts as Array<Record<string, unknown>>;
    expect(history.find((r) => r.version === 'v2' && r.target_state === 'DEPRECATED')).toMatchObject({
      actor: 'carol@z',
    });
  }, 120_000);

  it(
    "repair ending a rejected canary with alice's key while $AUTOCTX_ACTOR " +
      'names bob: its receipt is signed, names alice, and the tree verifies',
    async () => {
      const k = copy('repair');
      await rejectedCanary(k);
      expect(verified(k)).toEqual([expect.stringMatching(/^REJECTED_SERVING /)]);
      const advice = verify({knowledge: k, allowedSigners: anchor}).errors[0]!.message;
      expect(advice).toContain('autoctx repair --signing-key');
      const r = mustIn(k, ['repair', '--signing-key', key('alice')], 0, BOB);
      expect(r.actions).toEqual(expect.arrayContaining([expect.stringContaining('ended the CANARY of release v2')]));
      expect(lastReceipt(k)).toMatchObject({version: 'v2', target_state: 'DEPRECATED', actor: 'alice@x'});
      expect(verified(k)).toEqual([]);
    },
  );

  it('reject of an already rejected candidate still ends what serves it, with a receipt', async () => {
    const k = copy('again');
    await rejectedCanary(k);
    const r = mustIn(k, ['reject', v2, '--rationale', 'again', '--signing-key', key('alice')], 0, BOB);
    expect(r.already_rejected).toBe(true);
    expect(states(k)).toMatchObject({v2: 'DEPRECATED'});
    expect(lastReceipt(k)).toMatchObject({
      version: 'v2',
      from_state: 'CANARY',
      target_state: 'DEPRECATED',
      actor: 'alice@x',
    });
    expect(verified(k)).toEqual([]);
  });
});
