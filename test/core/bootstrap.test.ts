import fs from 'node:fs';
import path from 'node:path';
import {afterAll, describe, expect, it} from '@jest/globals';
import {claim, prepare, recall, render} from '../../src/public/bootstrap.js';
import {grantAdd, handoffWrite, referenceAdd, tagAdd, tagRm} from '../../src/core/delivery/curation.js';
import {init} from '../../src/core/common/init.js';
import {propose} from '../../src/core/promotion/propose.js';
import {verify} from '../../src/core/common/verify.js';
import {BOOTSTRAP_LIFECYCLES} from '../../src/model/delivery/bootstrap-receipt.js';
import {componentDigest} from '../../src/model/bundle/component.js';
import {isAutoctxError} from '../../src/errors.js';
import {tempDir, writeSource} from '../helpers/tree.js';
import {chainOrder} from '../helpers/git-histories.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, {recursive: true, force: true})));

const digestOf = (kind: string, key: string, content: string) =>
  componentDigest({kind, key, content, media_type: kind === 'routing_config' ? 'application/json' : 'text/markdown'});

/** A root with scenarios, each initialized from the files given (kind/key.md → content). */
async function root(scenarios: Record<string, Record<string, string>>): Promise<string> {
  const dir = tempDir('autoctx-bootstrap-');
  dirs.push(dir);
  const knowledge = path.join(dir, 'knowledge');
  for (const [scenario, files] of Object.entries(scenarios))
    await init({knowledge, scenario, from: writeSource(path.join(dir, `src-${scenario}`), files)});
  return knowledge;
}

async function code(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (error) {
    if (isAutoctxError(error)) return `${error.code} ${error.exitCode}`;
    throw error;
  }
  return 'no error';
}

const md = (kind: string, key: string) => `${kind}/${key}.md`;
const base = {
  playbook: 'Check the sync icon first.\n',
  hints: 'Quota warnings come from the account page.\n',
  notes: 'Ship notes every Friday.\n',
};
const demoFiles = {
  [md('playbook', 'playbook')]: base.playbook,
  [md('hints', 'hints')]: base.hints,
  [md('tool_guidance', 'notes')]: base.notes,
  [md('hints', 'API.Key')]: 'sk-do-not-show\n',
};
const D = {
  playbook: digestOf('playbook', 'playbook', base.playbook),
  hints: digestOf('hints', 'hints', base.hints),
  notes: digestOf('tool_guidance', 'notes', base.notes),
  secret: digestOf('hints', 'API.Key', 'sk-do-not-show\n'),
};
const prep = (knowledge: string, extra: Partial<Parameters<typeof prepare>[0]> = {}) =>
  prepare({knowledge, scenario: 'demo', integration: 'claude-code', lifecycle: 'startup', ...extra});

describe('opt-in and lifecycles', () => {
  it(
    'is off by default: skipped, disabled, nothing written without ' +
      'an event id; a keyed disabled event leaves a skipped receipt',
    async () => {
      const knowledge = await root({demo: demoFiles});
      await tagAdd({knowledge, digest: D.playbook});
      const off = await prep(knowledge);
      expect(off).toMatchObject({
        status: 'skipped',
        reason: 'disabled',
        content: null,
        items: [],
        receipt: {state: 'skipped', stored: false},
      });
      expect(fs.existsSync(path.join(knowledge, '.state/bootstrap'))).toBe(false);
      const keyed = await prep(knowledge, {eventId: 'session-1'});
      expect(keyed).toMatchObject({status: 'skipped', reason: 'disabled', receipt: {state: 'skipped', stored: true}});
    },
  );

  it('accepts every lifecycle, each its own event, and refuses any other', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.playbook});
    const ids = new Set<string>();
    for (const lifecycle of BOOTSTRAP_LIFECYCLES) {
      const r = await prep(knowledge, {lifecycle, enabled: true, eventId: 'same-session'});
      expect(r).toMatchObject({status: 'ready', receipt: {state: 'pending'}});
      ids.add(r.receipt.receipt_id);
    }
    expect(ids.size).toBe(BOOTSTRAP_LIFECYCLES.length);
    expect(await code(prep(knowledge, {lifecycle: 'reboot', enabled: true}))).toBe('USAGE 2');
  });
});

describe('selection', () => {
  it(
    'takes the exact handoff named first, never the latest; then ' + 'tags in the order added; secret kinds never',
    async () => {
      const knowledge = await root({demo: demoFiles});
      const dir = path.dirname(knowledge);
      for (const [i, summary] of ['first', 'second'].entries()) {
        fs.writeFileSync(path.join(dir, `h${i}.json`), JSON.stringify({summary}));
        expect(await handoffWrite({knowledge, id: 'notes', from: path.join(dir, `h${i}.json`)})).toMatchObject({
          status: 'written',
          revision: i + 1,
        });
      }
      for (const d of [D.hints, D.secret, D.playbook]) await tagAdd({knowledge, digest: d});
      const none = render({knowledge});
      expect(none.items.map((i) => i.kind)).toEqual(['component', 'component']); // no handoff unless named
      expect(none.items.map((i) => i.component_key)).toEqual(['hints', 'playbook']); // curated order, API.Key excluded
      expect(none.content).not.toContain('sk-do-not-show');
      const first = render({knowledge, handoff: 'notes@1'});
      expect(first.items[0]).toMatchObject({kind: 'handoff', handoff_id: 'notes', revision: 1});
      expect(first.content).toContain('"summary": "first"');
      expect(first.content).not.toContain('second');
      expect(render({knowledge, handoff: 'notes@2'}).content).toContain('"summary": "second"');
      expect(await code(() => render({knowledge, handoff: 'notes@3'}))).toBe('HANDOFF_NOT_FOUND 2');
      // Removing a tag and adding it again moves it to the end.
      await tagRm({knowledge, digest: D.hints});
      await tagAdd({knowledge, digest: D.hints});
      expect(render({knowledge}).items.map((i) => i.component_key)).toEqual(['playbook', 'hints']);
    },
  );

  it('counts only components of the serving bundle: a new revision of a tagged component is not tagged', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.hints});
    const dir = path.dirname(knowledge);
    const p = await propose({
      knowledge,
      from: writeSource(path.join(dir, 'next'), {
        ...demoFiles,
        [md('hints', 'hints')]: 'Quota warnings moved to settings.\n',
      }),
    });
    const changed = digestOf('hints', 'hints', 'Quota warnings moved to settings.\n');
    // A proposed candidate's component can be tagged (it is in a stored bundle), but it serves nobody yet.
    expect(await tagAdd({knowledge, digest: changed})).toMatchObject({status: 'tagged'});
    expect(p.bundle_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(render({knowledge}).items.map((i) => i.component_digest)).toEqual([D.hints]);
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: []});
  });

  it(
    'takes references in declared order only when they grant read ' +
      'access; missing and ungranted ones are counted, not fatal',
    async () => {
      const other = {[md('playbook', 'playbook')]: 'Billing playbook.\n'};
      const knowledge = await root({
        demo: demoFiles,
        billing: other,
        legal: {[md('playbook', 'playbook')]: 'Legal playbook.\n'},
      });
      const billing = digestOf('playbook', 'playbook', 'Billing playbook.\n');
      await tagAdd({knowledge, scenario: 'demo', digest: D.playbook});
      await tagAdd({knowledge, scenario: 'billing', digest: billing});
      await tagAdd({knowledge, scenario: 'legal', digest: digestOf('playbook', 'playbook', 'Legal playbook.\n')});
      for (const name of ['ghost', 'legal', 'billing']) await referenceAdd({knowledge, scenario: 'demo', name});
      let r = render({knowledge, scenario: 'demo'});
      expect(r.references).toEqual({declared: 3, considered: 3, participating: 0, missing: 1, ungranted: 2});
      expect(r.items.map((i) => i.scenario)).toEqual(['demo']);
      await grantAdd({knowledge, scenario: 'billing', name: 'demo'});
      r = render({knowledge, scenario: 'demo'});
      expect(r.references).toEqual({declared: 3, considered: 3, participating: 1, missing: 1, ungranted: 1});
      expect(r.items.map((i) => [i.scenario, i.component_digest])).toEqual([
        ['demo', D.playbook],
        ['billing', billing],
      ]);
      // At most eight references are considered.
      for (let i = 0; i < 7; i++) await referenceAdd({knowledge, scenario: 'demo', name: `more-${i}`});
      expect(render({knowledge, scenario: 'demo'}).references).toMatchObject({declared: 10, considered: 8});
    },
  );

  it('omits what does not fit, counting it, and marks the package truncated', async () => {
    const long = (c: string) => `${c.repeat(1900)}\n`;
    const files = Object.fromEntries(['a', 'b', 'c', 'd'].map((c) => [md('hints', c), long(c)]));
    const knowledge = await root({demo: files});
    for (const c of ['a', 'b', 'c', 'd']) await tagAdd({knowledge, digest: digestOf('hints', c, long(c))});
    const r = render({knowledge, maxBytes: 4096});
    expect(r.content_bytes).toBeLessThanOrEqual(4096);
    expect(r.truncated).toBe(true);
    expect(r.items.length + r.omitted).toBe(4);
    expect(r.omitted).toBeGreaterThan(0);
  });
});

describe('curation limits', () => {
  it('refuses a 33rd tag, a reference named twice, and the scenario itself', async () => {
    const files = Object.fromEntries(Array.from({length: 33}, (_, i) => [md('hints', `h${i}`), `hint ${i}\n`]));
    const knowledge = await root({demo: files});
    for (let i = 0; i < 32; i++) await tagAdd({knowledge, digest: digestOf('hints', `h${i}`, `hint ${i}\n`)});
    expect(await code(tagAdd({knowledge, digest: digestOf('hints', 'h32', 'hint 32\n')}))).toBe('TAG_LIMIT 2');
    await referenceAdd({knowledge, name: 'billing'});
    await referenceAdd({knowledge, name: 'legal'});
    expect(await code(referenceAdd({knowledge, name: 'billing'}))).toBe('INVALID_INPUT 2');
    expect(await code(referenceAdd({knowledge, name: 'demo'}))).toBe('INVALID_INPUT 2');
    expect(verify({knowledge})).toMatchObject({status: 'ok', errors: []});
  });
});

describe('a curation change cut short', () => {
  it(
    'is a warning that repair completes: an entry ahead of ' + 'curation.json, a handoff revision ahead of its head',
    async () => {
      const knowledge = await root({demo: demoFiles});
      const {repair} = await import('../../src/core/common/repair.js');
      const curation = path.join(knowledge, 'demo/context_bundles/bootstrap/curation.json');
      await tagAdd({knowledge, digest: D.playbook});
      const before = fs.readFileSync(curation);
      await tagAdd({knowledge, digest: D.hints});
      fs.writeFileSync(curation, before); // as if killed between the entry and curation.json
      expect(verify({knowledge}).warnings.map((w) => w.code)).toEqual(['CURATION_PENDING']);
      // what is in force is curation.json
      expect(render({knowledge}).items.map((i) => i.component_key)).toEqual(['playbook']);
      const history = path.join(knowledge, 'demo/context_bundles/bootstrap/curation_history');
      const second = chainOrder(history, 'previous_entry_sha256')[1]!;
      expect((await repair({knowledge})).actions.join('\n')).toContain(
        `completed demo/context_bundles/bootstrap/curation.json from ` +
          `demo/context_bundles/bootstrap/curation_history/${second}`,
      );
      expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
      expect(render({knowledge}).items.map((i) => i.component_key)).toEqual(['playbook', 'hints']);
      // A handoff revision written, its curation entry not: pending, then indexed by repair.
      const dir = path.dirname(knowledge);
      fs.writeFileSync(path.join(dir, 'h.json'), '{"summary": "one"}');
      const kept = fs.readFileSync(curation);
      const entries = path.join(knowledge, 'demo/context_bundles/bootstrap/curation_history');
      await handoffWrite({knowledge, id: 'notes', from: path.join(dir, 'h.json')});
      fs.rmSync(path.join(entries, chainOrder(entries, 'previous_entry_sha256')[2]!));
      fs.writeFileSync(curation, kept);
      expect(verify({knowledge}).warnings.map((w) => w.code)).toEqual(['HANDOFF_PENDING']);
      expect(await code(() => render({knowledge, handoff: 'notes@1'}))).toBe('HANDOFF_NOT_FOUND 2');
      const revision = chainOrder(
        path.join(knowledge, 'demo/context_bundles/bootstrap/handoffs/notes'),
        'previous_document_digest',
      )[0]!;
      expect((await repair({knowledge})).actions.join('\n')).toContain(
        `recorded demo/context_bundles/bootstrap/handoffs/notes/${revision} in ` +
          `demo/context_bundles/bootstrap/curation.json, a handoff write cut short`,
      );
      expect(verify({knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
      expect(render({knowledge, handoff: 'notes@1'}).items[0]).toMatchObject({kind: 'handoff', revision: 1});
    },
  );

  it('a hand edit of curation.json that its history does not hold is an error naming both files', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.playbook});
    const curation = path.join(knowledge, 'demo/context_bundles/bootstrap/curation.json');
    const doc = JSON.parse(fs.readFileSync(curation, 'utf8'));
    fs.writeFileSync(curation, JSON.stringify({...doc, grants: ['billing']}));
    const v = verify({knowledge});
    expect(v.status).toBe('failed');
    expect(v.errors.map((e) => [e.code, e.file])).toEqual([
      ['CURATION_MISMATCH', 'demo/context_bundles/bootstrap/curation.json'],
      [
        'CURATION_MISMATCH',
        `demo/context_bundles/bootstrap/curation_history/${
          chainOrder(
            path.join(knowledge, 'demo/context_bundles/boot' + 'strap/curation_history'),
            'previous_entry_sha256',
          )[0]
        }`,
      ],
    ]);
    // Neither a writer nor a reader builds on it.
    expect(await code(tagAdd({knowledge, digest: D.hints}))).toBe('INTEGRITY 8');
    expect(await code(() => render({knowledge}))).toBe('INTEGRITY 8');
    expect(await code(prep(knowledge, {enabled: true}))).toBe('INTEGRITY 8');
  });

  it(
    'a handoff revision changed by hand, its content digest made ' +
      'to match, is refused by render and by the next write',
    async () => {
      const knowledge = await root({demo: demoFiles});
      const dir = path.dirname(knowledge);
      for (const [i, summary] of ['one', 'two'].entries()) {
        fs.writeFileSync(path.join(dir, `h${i}.json`), JSON.stringify({summary}));
        await handoffWrite({knowledge, id: 'notes', from: path.join(dir, `h${i}.json`)});
      }
      const {stableDigest} = await import('../../src/canonical/index.js');
      for (const rev of [1, 2]) {
        const copy = path.join(tempDir('autoctx-bootstrap-'), 'knowledge');
        dirs.push(path.dirname(copy));
        fs.cpSync(knowledge, copy, {recursive: true});
        const notes = path.join(copy, 'demo/context_bundles/bootstrap/handoffs/notes');
        const name = chainOrder(notes, 'previous_document_digest')[rev - 1]!;
        const file = path.join(notes, name);
        const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
        const content = {summary: 'forged'};
        fs.writeFileSync(file, JSON.stringify({...doc, content, content_digest: stableDigest(content)}));
        expect(await code(() => render({knowledge: copy, handoff: `notes@${rev}`}))).toBe('INTEGRITY 8');
        expect(verify({knowledge: copy}).errors.map((e) => e.file)).toContain(
          `demo/context_bundles/bootstrap/handoffs/notes/${name}`,
        );
      }
      const copy = path.join(tempDir('autoctx-bootstrap-'), 'knowledge');
      dirs.push(path.dirname(copy));
      fs.cpSync(knowledge, copy, {recursive: true});
      const notes = path.join(copy, 'demo/context_bundles/bootstrap/handoffs/notes');
      const head = path.join(notes, chainOrder(notes, 'previous_document_digest')[1]!);
      const doc = JSON.parse(fs.readFileSync(head, 'utf8'));
      fs.writeFileSync(
        head,
        JSON.stringify({...doc, content: {summary: 'x'}, content_digest: stableDigest({summary: 'x'})}),
      );
      fs.writeFileSync(path.join(dir, 'h3.json'), '{"summary": "three"}');
      expect(await code(handoffWrite({knowledge: copy, id: 'notes', from: path.join(dir, 'h3.json')}))).toBe(
        'INTEGRITY 8',
      );
    },
  );
});

describe('receipts', () => {
  it('a retry of a pending event returns the same package and receipt; after a claim it is skipped', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.playbook});
    const first = await prep(knowledge, {enabled: true, eventId: 'e1'});
    const again = await prep(knowledge, {enabled: true, eventId: 'e1'});
    expect(again).toEqual(first);
    expect(first.status).toBe('ready');
    expect(await claim({knowledge, receipt: first.receipt.receipt_id, outcome: 'injected'})).toMatchObject({
      status: 'claimed',
      state: 'injected',
    });
    expect(await prep(knowledge, {enabled: true, eventId: 'e1'})).toMatchObject({
      status: 'skipped',
      reason: 'already_delivered',
      content: null,
      receipt: {receipt_id: first.receipt.receipt_id, state: 'injected'},
    });
    // A second injected claim is refused even though the receipt is injected; a failed claim returns it as it is.
    expect(await code(claim({knowledge, receipt: first.receipt.receipt_id, outcome: 'injected'}))).toBe(
      'RECEIPT_ALREADY_CLAIMED 6',
    );
    expect(await claim({knowledge, receipt: first.receipt.receipt_id, outcome: 'failed'})).toMatchObject({
      status: 'unchanged',
      state: 'injected',
    });
    expect(await code(claim({knowledge, receipt: `bcr_${'1'.repeat(32)}`, outcome: 'failed'}))).toBe(
      'RECEIPT_NOT_FOUND 2',
    );
    expect(await code(claim({knowledge, scenario: 'demo', receipt: 'nope', outcome: 'failed'}))).toBe(
      'INVALID_INPUT 2',
    );
  });

  it('refuses the same event with another byte limit or handoff, and a failed claim ends it', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.playbook});
    const r = await prep(knowledge, {enabled: true, eventId: 'e2'});
    expect(await code(prep(knowledge, {enabled: true, eventId: 'e2', maxBytes: 1024}))).toBe(
      'BOOTSTRAP_REQUEST_MISMATCH 2',
    );
    expect(await claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'failed'})).toMatchObject({
      status: 'claimed',
      state: 'failed',
    });
    expect(await code(claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'}))).toBe(
      'RECEIPT_ALREADY_CLAIMED 6',
    );
    expect(await prep(knowledge, {enabled: true, eventId: 'e2'})).toMatchObject({
      status: 'skipped',
      reason: 'already_delivered',
    });
  });

  it('revoking the opt-in while pending skips the event without reading references', async () => {
    const knowledge = await root({demo: demoFiles, billing: {[md('playbook', 'playbook')]: 'Billing.\n'}});
    await tagAdd({knowledge, scenario: 'demo', digest: D.playbook});
    await referenceAdd({knowledge, scenario: 'demo', name: 'billing'});
    const r = await prep(knowledge, {enabled: true, eventId: 'e3'});
    // The reference's curation is now unreadable: a disabled retry must not touch it.
    fs.mkdirSync(path.join(knowledge, 'billing/context_bundles/bootstrap'), {recursive: true});
    fs.writeFileSync(path.join(knowledge, 'billing/context_bundles/bootstrap/curation.json'), '{');
    expect(await prep(knowledge, {eventId: 'e3'})).toMatchObject({
      status: 'skipped',
      reason: 'disabled',
      receipt: {receipt_id: r.receipt.receipt_id, state: 'skipped'},
    });
    expect(await code(claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'}))).toBe(
      'RECEIPT_ALREADY_CLAIMED 6',
    );
  });

  it('a pending retry after the grant was withdrawn is not delivered: failed, preparation_failed', async () => {
    const knowledge = await root({demo: demoFiles, billing: {[md('playbook', 'playbook')]: 'Billing.\n'}});
    await tagAdd({knowledge, scenario: 'billing', digest: digestOf('playbook', 'playbook', 'Billing.\n')});
    await referenceAdd({knowledge, scenario: 'demo', name: 'billing'});
    await grantAdd({knowledge, scenario: 'billing', name: 'demo'});
    const r = await prep(knowledge, {enabled: true, eventId: 'e4'});
    expect(r.items.map((i) => i.scenario)).toEqual(['billing']);
    const {grantRm} = await import('../../src/core/delivery/curation.js');
    await grantRm({knowledge, scenario: 'billing', name: 'demo'});
    expect(await prep(knowledge, {enabled: true, eventId: 'e4'})).toMatchObject({
      status: 'skipped',
      reason: 'preparation_failed',
      receipt: {state: 'failed'},
    });
  });

  it('an empty request is empty with a skipped receipt, stored only with an event id', async () => {
    const knowledge = await root({demo: demoFiles});
    expect(await prep(knowledge, {enabled: true})).toMatchObject({
      status: 'empty',
      reason: 'no_eligible_context',
      receipt: {state: 'skipped', stored: false},
    });
    expect(await prep(knowledge, {enabled: true, eventId: 'e5'})).toMatchObject({
      status: 'empty',
      receipt: {state: 'skipped', stored: true},
    });
    // Without an event id a ready package still gets a pending receipt file.
    await tagAdd({knowledge, digest: D.notes});
    const ready = await prep(knowledge, {enabled: true});
    expect(ready).toMatchObject({status: 'ready', receipt: {state: 'pending', stored: true}});
    expect(fs.existsSync(path.join(knowledge, `.state/bootstrap/receipts/${ready.receipt.receipt_id}.json`))).toBe(
      true,
    );
  });

  it('prunes receipts older than 30 days at the first prepare of a day (an injected clock)', async () => {
    const knowledge = await root({demo: demoFiles});
    await tagAdd({knowledge, digest: D.playbook});
    const t0 = new Date('2026-10-01T00:00:00Z');
    const hours = (h: number) => new Date(t0.getTime() + h * 3_600_000);
    const old = await prep(knowledge, {enabled: true, eventId: 'old', now: () => t0});
    const file = path.join(knowledge, `.state/bootstrap/receipts/${old.receipt.receipt_id}.json`);
    await prep(knowledge, {enabled: true, eventId: 'new', now: () => hours(29 * 24 + 12)});
    expect(fs.existsSync(file)).toBe(true);
    // Expired, but pruned less than a day ago: kept until the next day's first prepare (.state/housekeeping.json).
    await prep(knowledge, {enabled: true, eventId: 'next', now: () => hours(30 * 24 + 1)});
    expect(fs.existsSync(file)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(knowledge, '.state/housekeeping.json'), 'utf8')).pruned_at).toBe(
      '2026-10-30T12:00:00.000000+00:00',
    );
    // Bad input is refused before anything is pruned.
    expect(
      await code(
        prep(knowledge, {
          enabled: true,
          eventId: 'x',
          maxBytes: 10,
          now: () => new Date(t0.getTime() + 31 * 86_400_000),
        }),
      ),
    ).toBe('USAGE 2');
    expect(fs.existsSync(file)).toBe(true);
    await prep(knowledge, {enabled: true, eventId: 'later', now: () => new Date(t0.getTime() + 31 * 86_400_000)});
    expect(fs.existsSync(file)).toBe(false);
  });

  it(
    'a clock that jumps ahead prunes nothing by itself: a ' +
      'retried event finds its receipt and is not delivered again',
    async () => {
      const knowledge = await root({demo: demoFiles});
      await tagAdd({knowledge, digest: D.playbook});
      const t0 = new Date('2026-10-01T00:00:00Z');
      const days = (d: number) => new Date(t0.getTime() + d * 86_400_000);
      const first = await prep(knowledge, {enabled: true, eventId: 'e', now: () => t0});
      expect(first.status).toBe('ready');
      await claim({knowledge, receipt: first.receipt.receipt_id, outcome: 'injected', now: () => t0});
      const file = path.join(knowledge, `.state/bootstrap/receipts/${first.receipt.receipt_id}.json`);
      // The clock 31 days ahead: the day's first prepare prunes, judged at the newest recorded time (t0), not the
      // clock.
      await prep(knowledge, {enabled: true, eventId: 'other', now: () => days(31)});
      expect(fs.existsSync(file)).toBe(true);
      for (const at of [days(31), days(0.01)]) {
        const again = await prep(knowledge, {enabled: true, eventId: 'e', now: () => at});
        expect([again.status, again.reason, again.receipt.receipt_id]).toEqual([
          'skipped',
          'already_delivered',
          first.receipt.receipt_id,
        ]);
      }
      // A clock that stays ahead and records there is time that passed: the next day's prune judges at day 31.
      await prep(knowledge, {enabled: true, eventId: 'later', now: () => days(32.5)});
      expect(fs.existsSync(file)).toBe(false);
    },
  );

  it(
    'stores no content: every byte of the receipts after a full ' +
      'run holds no body, query, raw event id or handoff text',
    async () => {
      const knowledge = await root({demo: demoFiles});
      const dir = path.dirname(knowledge);
      fs.writeFileSync(path.join(dir, 'h.json'), JSON.stringify({summary: 'HANDOFF-BODY-TEXT'}));
      await handoffWrite({knowledge, id: 'notes', from: path.join(dir, 'h.json')});
      for (const d of [D.playbook, D.hints]) await tagAdd({knowledge, digest: d});
      const rawEvent = 'RAW-EVENT-ID-7f3a';
      const r = await prep(knowledge, {enabled: true, eventId: rawEvent, handoff: 'notes@1'});
      await claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'});
      recall({knowledge, query: 'QUERY-TEXT quota', receipt: r.receipt.receipt_id});
      await prep(knowledge, {enabled: true, eventId: 'another', maxBytes: 512, handoff: 'notes@1'});
      const folder = path.join(knowledge, '.state/bootstrap');
      const all = (fs.readdirSync(folder, {recursive: true}) as string[])
        .map((f) => path.join(folder, f))
        .filter((f) => fs.statSync(f).isFile());
      expect(all.length).toBe(2);
      const bytes = all.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
      for (const secret of [
        base.playbook.trim(),
        base.hints.trim(),
        'HANDOFF-BODY-TEXT',
        rawEvent,
        'QUERY-TEXT',
        'BEGIN',
        'Quoted history',
      ])
        expect([secret, bytes.includes(secret)]).toEqual([secret, false]);
      for (const f of all) expect(fs.statSync(f).mode & 0o777).toBe(0o600);
      expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
    },
  );
});

describe('recall with first-query dedup', () => {
  const files = {
    ...demoFiles,
    [md('hints', 'quota-a')]: 'Quota warnings: the account page shows the quota.\n',
    [md('hints', 'quota-b')]: 'Quota resets monthly; quota e-mails go to the owner.\n',
    [md('hints', 'unrelated')]: 'Printers are out of scope.\n',
  };
  const qa = digestOf('hints', 'quota-a', files[md('hints', 'quota-a')]!);

  it(
    'is deterministic, ranks by score with ties by (scenario, kind, ' +
      'key), and is sufficient only at or above the minimum score',
    async () => {
      const knowledge = await root({demo: files});
      const a = recall({knowledge, query: 'quota'});
      expect(recall({knowledge, query: 'quota'})).toEqual(a);
      expect(a.status).toBe('ready');
      expect(a.items.every((i, k) => k === 0 || a.items[k - 1]!.score >= i.score)).toBe(true);
      expect(a.items.map((i) => i.component_key)).not.toContain('API.Key');
      expect(a.content).toMatch(/^# autoctx recalled context/);
      expect(recall({knowledge, query: 'zebra'})).toMatchObject({status: 'empty', sufficient: false, content: null});
    },
  );

  it('breaks ties by (scenario, kind, key)', async () => {
    const same = 'Quota resets monthly.\n';
    const knowledge = await root({
      demo: {
        ...demoFiles,
        [md('tool_guidance', 'b-quota')]: same,
        [md('hints', 'z-quota')]: same,
        [md('hints', 'a-quota')]: same,
      },
    });
    const r = recall({knowledge, query: 'resets'});
    expect(r.items.map((i) => `${i.component_kind}/${i.component_key}`)).toEqual([
      'hints/a-quota',
      'hints/z-quota',
      'tool_guidance/b-quota',
    ]);
    expect(new Set(r.items.map((i) => i.score)).size).toBe(1);
  });

  it('a delivered component never satisfies the sufficiency rule: what only it matched is not ready', async () => {
    const knowledge = await root({demo: files});
    await tagAdd({knowledge, digest: qa});
    const r = await prep(knowledge, {enabled: true, eventId: 'q0'});
    expect(recall({knowledge, query: 'shows'})).toMatchObject({
      status: 'ready',
      items: [expect.objectContaining({component_key: 'quota-a'})],
    });
    await claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'});
    expect(recall({knowledge, query: 'shows', receipt: r.receipt.receipt_id})).toMatchObject({
      status: 'empty',
      sufficient: false,
      deduplicated: 1,
      items: [],
    });
  });

  it(
    'drops the exact components an injected receipt delivered ' + 'whole, before the limit and the sufficiency rule',
    async () => {
      const knowledge = await root({demo: files});
      await tagAdd({knowledge, digest: qa});
      const r = await prep(knowledge, {enabled: true, eventId: 'q1'});
      // Not injected yet: the receipt is ignored (fail open).
      expect(recall({knowledge, query: 'quota', receipt: r.receipt.receipt_id})).toMatchObject({
        receipt_used: false,
        deduplicated: 0,
      });
      await claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'});
      const after = recall({knowledge, query: 'quota', receipt: r.receipt.receipt_id});
      expect(after).toMatchObject({receipt_used: true, deduplicated: 1});
      expect(after.items.map((i) => i.component_key)).not.toContain('quota-a');
      expect(after.items.map((i) => i.component_key)).toContain('quota-b'); // unrelated matches stay
      // A receipt of another scenario, or an unknown one, is ignored.
      expect(recall({knowledge, query: 'quota', receipt: `bcr_${'2'.repeat(32)}`})).toMatchObject({
        receipt_used: false,
      });
    },
  );

  it('keeps recalling a component delivered only in part, and a newer revision of a delivered one', async () => {
    const big = `Quota ${'details '.repeat(400)}\n`;
    const others = {
      [md('playbook', 'playbook')]: 'Greet the customer.\n',
      [md('tool_guidance', 'search')]: 'Search the help centre.\n',
      [md('hints', 'printers')]: 'Printers are out of scope.\n',
    };
    const knowledge = await root({
      demo: {...others, [md('hints', 'big')]: big, [md('hints', 'small')]: 'Quota small note.\n'},
    });
    await tagAdd({knowledge, digest: digestOf('hints', 'big', big)});
    await tagAdd({knowledge, digest: digestOf('hints', 'small', 'Quota small note.\n')});
    const r = await prep(knowledge, {enabled: true, eventId: 'q2'});
    expect(r.items.find((i) => i.component_key === 'big')!.truncated).toBe(true);
    await claim({knowledge, receipt: r.receipt.receipt_id, outcome: 'injected'});
    const after = recall({knowledge, query: 'quota', receipt: r.receipt.receipt_id});
    expect(after.items.map((i) => i.component_key)).toEqual(['big']); // small was delivered whole; big only in part
    // A newer revision of "small" (a new digest) serves after a promotion: it is recalled again.
    const {promoteForTest} = await import('../helpers/promote.js');
    await promoteForTest(knowledge, 'demo', {
      ...others,
      [md('hints', 'big')]: big,
      [md('hints', 'small')]: 'Quota small note, revised.\n',
    });
    const revised = recall({knowledge, query: 'quota', receipt: r.receipt.receipt_id});
    expect(revised.items.map((i) => i.component_key).sort()).toEqual(['big', 'small']);
  });
});
