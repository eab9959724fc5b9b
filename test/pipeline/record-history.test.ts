import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCliProcess} from '../helpers/cli.js';
import {chainOrder} from '../helpers/git-histories.js';
import {evalArgs, fakeEnv, useTrees} from '../helpers/pipeline.js';

// Log is the whole history. Every change of a record is kept as an
// immutable, chained entry of candidates/<digest>/record_history/.
const tree = useTrees();

const BETTER = {
  'playbook/playbook.md': 'Be helpful and precise.\n',
  'routing_config/roles.json': '{"model_competitor": "small"}',
};
const codes = (r: ReturnType<typeof verify>) => [...r.errors, ...r.warnings].map((e) => [e.code, e.file]);

function screenedConfirmedPromoted(promote = true) {
  const t = tree();
  const c = t.propose('better', BETTER);
  for (const step of [
    ['screen', c, ...evalArgs()],
    ['confirm', c, ...evalArgs()],
    ...(promote ? [['promote', c]] : []),
  ]) {
    const r = t.cli(step, fakeEnv(t.dir));
    if (r.status !== 0) throw new Error(r.stdout + r.stderr);
  }
  // In the order the entries' links give: the names are digests.
  const entries = (d: string) => chainOrder(t.file(`candidates/${d}/record_history`), 'previous_entry_sha256');
  return {t, c, entries};
}

describe('record history', () => {
  it(
    'log shows a candidate screened, then confirmed, then ' + 'promoted: each step once, at its own time, newest first',
    () => {
      const {t, c, entries} = screenedConfirmedPromoted();
      const log = runCliProcess(['log', '--knowledge', t.knowledge, '--json']).json;
      const mine = log.entries.filter((e: {to_digest: string}) => e.to_digest === c).map((e: {type: string}) => e.type);
      expect(mine).toEqual(['promotion', 'confirmation', 'screen', 'proposal']);
      const times = log.entries.filter((e: {to_digest: string}) => e.to_digest === c).map((e: {at: string}) => e.at);
      expect(new Set(times).size).toBe(4);
      // proposed, screened, confirmed (plus the policy recorded when the confirmation began), active.
      const kept = entries(c).map((f) =>
        JSON.parse(fs.readFileSync(t.file(`candidates/${c}/record_history/${f}`), 'utf8')),
      );
      expect(kept.map((e) => e.seq)).toEqual(kept.map((_, i) => i + 1));
      expect(kept.map((e) => e.record.lifecycle)).toEqual(
        expect.arrayContaining(['proposed', 'screened', 'confirmed', 'active']),
      );
      expect(kept.at(-1).record).toEqual(JSON.parse(t.read(`candidates/${c}/record.json`)));
      expect(JSON.parse(t.read('record_histories.json'))).toMatchObject({
        schema_version: 1,
        scenario: 'demo',
        predating: [],
      });
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );

  it('verify names an edited entry, a lost entry, an edited record and a lost adoption document', () => {
    const {t, c, entries} = screenedConfirmedPromoted();
    const rel = (f: string) => path.relative(t.knowledge, f);
    const names = entries(c);
    const second = t.file(`candidates/${c}/record_history/${names[1]}`);
    const original = fs.readFileSync(second, 'utf8');

    // An entry is named by its own digest: an edit is a name that no longer fits, named once (not also as lost).
    fs.writeFileSync(second, original.replace(/"rationale": "[^"]*"/, '"rationale": "screened by nobody"'));
    expect(codes(verify({knowledge: t.knowledge}))).toEqual([['DIGEST_MISMATCH', rel(second)]]);
    fs.rmSync(second);
    expect(codes(verify({knowledge: t.knowledge}))).toContainEqual(['MISSING_RECORD_HISTORY', rel(second)]);
    fs.writeFileSync(second, original);

    const record = t.file(`candidates/${c}/record.json`);
    const recordText = fs.readFileSync(record, 'utf8');
    fs.writeFileSync(record, recordText.replace(/"rationale": "[^"]*"/, '"rationale": "promoted by the board"'));
    expect(codes(verify({knowledge: t.knowledge}))).toContainEqual(['RECORD_HISTORY_MISMATCH', rel(record)]);
    fs.writeFileSync(record, recordText);

    const adoption = t.file('record_histories.json');
    const adoptionText = fs.readFileSync(adoption, 'utf8');
    fs.rmSync(adoption);
    expect(codes(verify({knowledge: t.knowledge}))).toContainEqual(['MISSING_RECORD_HISTORY', rel(adoption)]);
    fs.writeFileSync(adoption, adoptionText);

    // A far-off number (the naming of earlier versions) is one error, not one per missing position.
    const far = t.file(`candidates/${c}/record_history/999999.json`);
    fs.copyFileSync(second, far);
    expect(codes(verify({knowledge: t.knowledge}))).toEqual([['DIGEST_MISMATCH', rel(far)]]);
    fs.rmSync(far);

    // A whole history gone: the candidate is not one the adoption found without one.
    const dir = t.file(`candidates/${c}/record_history`);
    const saved = path.join(t.dir, 'saved-history');
    fs.cpSync(dir, saved, {recursive: true});
    fs.rmSync(dir, {recursive: true});
    const gone = verify({knowledge: t.knowledge}).errors.find((e) => e.code === 'MISSING_RECORD_HISTORY');
    expect(gone?.file).toBe(rel(dir));
    expect(gone?.message).toMatch(/holds no entry/);
    fs.cpSync(saved, dir, {recursive: true});
    expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
  });

  it(
    'a record one change behind its history (a crash between the two ' +
      'writes) is a warning that status hints at and repair completes',
    () => {
      const {t, c, entries} = screenedConfirmedPromoted(false);
      const names = entries(c);
      const before = JSON.parse(
        fs.readFileSync(t.file(`candidates/${c}/record_history/${names.at(-2)}`), 'utf8'),
      ).record;
      const record = t.file(`candidates/${c}/record.json`);
      const now = fs.readFileSync(record, 'utf8');
      // The record as it was before the last change, in the writer's own spelling.
      fs.writeFileSync(record, `${JSON.stringify(before, null, 2)}\n`);
      const v = verify({knowledge: t.knowledge});
      expect(v.warnings.map((w) => w.code)).toContain('RECORD_HISTORY_PENDING');
      const status = runCliProcess(['status', '--knowledge', t.knowledge, '--json']).json;
      expect(status.scenarios[0].repairable.join('\n')).toMatch(/one change behind its history/);
      const repaired = runCliProcess(['repair', '--knowledge', t.knowledge, '--json']);
      expect(repaired.status).toBe(0);
      expect(repaired.json.actions.join('\n')).toMatch(/completed .*record\.json from .*record_history/);
      expect(JSON.parse(fs.readFileSync(record, 'utf8'))).toEqual(JSON.parse(now));
      expect(entries(c)).toEqual(names);
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );

  it(
    'a tree whose candidates have no history (the Python implementation, an earlier ' +
      'autoctx) is adopted: they are listed as predating, and log shows their latest decision',
    () => {
      const t = tree();
      const c = t.propose('better', BETTER);
      const r = t.cli(['screen', c, ...evalArgs()], fakeEnv(t.dir));
      expect(r.status).toBe(0);
      // As another implementation leaves it: no histories, no adoption.
      for (const d of fs.readdirSync(t.file('candidates')))
        fs.rmSync(t.file(`candidates/${d}/record_history`), {recursive: true, force: true});
      fs.rmSync(t.file('record_histories.json'));
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
      const legacy = runCliProcess(['log', '--knowledge', t.knowledge, '--json']).json.entries.filter(
        (e: {to_digest: string}) => e.to_digest === c,
      );
      expect(legacy.map((e: {type: string}) => e.type)).toEqual(['screen', 'proposal']);
      // The next write adopts: every candidate with a record and no history is predating.
      const d = t.propose('other', {...BETTER, 'playbook/playbook.md': 'Be kind.\n'});
      const adoption = JSON.parse(t.read('record_histories.json'));
      expect(adoption.predating).toEqual([...fs.readdirSync(t.file('candidates'))].filter((x) => x !== d).sort());
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
      // A predating candidate's later changes are kept from then on.
      expect(t.cli(['confirm', c, ...evalArgs()], fakeEnv(t.dir)).status).toBe(0);
      const after = runCliProcess(['log', '--knowledge', t.knowledge, '--json']).json.entries.filter(
        (e: {to_digest: string}) => e.to_digest === c,
      );
      expect(after.map((e: {type: string}) => e.type)).toEqual(['confirmation', 'screen', 'proposal']);
      expect(verify({knowledge: t.knowledge})).toMatchObject({status: 'ok', errors: [], warnings: []});
    },
  );
});
