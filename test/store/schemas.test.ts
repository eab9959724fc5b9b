import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {Ajv2020} from 'ajv/dist/2020.js';
import {SCHEMA_DIR, schemaProblem, type SchemaName} from '../../src/store/schemas.js';
import {resultSchemaProblem} from '../../src/store/result-schemas.js';
import {SAMPLE_KNOWLEDGE} from '../helpers/paths.js';

const schemaFiles = fs.readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.schema.json'));
const demo = path.join(SAMPLE_KNOWLEDGE, 'demo');
const read = (rel: string) => JSON.parse(fs.readFileSync(path.join(demo, rel), 'utf8'));
const promoted = 'context_bundles/candidates/6d9bc734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252';
const rejected = 'context_bundles/candidates/28c6b3dd75f91e22e276a5095ab79804f165e6e38ac632c9d228a43ff4cd2ada';

describe('schemas', () => {
  it('every schema compiles under Ajv 2020 strict mode, and the build precompiled a validator for each', () => {
    const ajv = new Ajv2020({strict: true});
    // The annotation that marks the schemas the agent-host hook reads (scripts/gen-schema-names.js).
    ajv.addKeyword({keyword: 'x-autoctx-hook', schemaType: 'boolean'});
    for (const f of schemaFiles) ajv.addSchema(JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, f), 'utf8')));
    for (const f of schemaFiles) {
      const name = f.slice(0, -'.schema.json'.length);
      expect(ajv.getSchema(`https://autoctx.dev/schemas/${f}`)).toBeDefined();
      if (name.startsWith('result-')) expect(() => resultSchemaProblem(name as `result-${string}`, {})).not.toThrow();
      else if (name !== 'common') expect(() => schemaProblem(name as SchemaName, {})).not.toThrow();
    }
  });

  it.each<[SchemaName, string]>([
    ['active', 'context_bundles/active.json'],
    ['manifest', 'context_bundles/bundles/9fe14ef551d9ecddd152d0826d2e636e63613b62684ce950f45f8e7a936b71bb.json'],
    ['record-v2', `${promoted}/record.json`],
    ['manifest-diff', `${promoted}/manifest_diff.json`],
    ['matched-trials', `${promoted}/matched_trials.json`],
    ['evaluator-plan', `${promoted}/evaluator_plan.json`],
    ['causal-attribution', `${promoted}/causal_attribution.json`],
    ['negative-result', `${rejected}/negative_result.json`],
    ['promotion', 'context_bundles/promotions/eb61659e23634846820a743a1ed80e8f.json'],
    ['false-promotion', 'context_bundles/promotion-risk/run-1/false-promotion.json'],
    [
      'reservation-artifact',
      'context_bundles/promotion-risk/run-1/reservation-artifacts/6d9bc' +
        '734d9797ede20d2ae1c5cff2b66a4105472dccf2929205f1551ad942252.json',
    ],
  ])('%s accepts the file the Python implementation wrote (%s)', (schema, rel) => {
    expect(schemaProblem(schema, read(rel))).toBeNull();
  });

  it('the legacy matched-trials array and a schema-1 record are accepted', () => {
    const trials = read(`${promoted}/matched_trials.json`).trials;
    expect(schemaProblem('matched-trials-legacy', trials)).toBeNull();
    const {confirmation_policy: _p, confirmation_policy_digest: _d, ...v1} = read(`${promoted}/record.json`);
    expect(schemaProblem('record-v1', {...v1, schema_version: 1})).toBeNull();
  });

  it('fixture digests are free labels, bundle digests are hex', () => {
    const envelope = read(`${promoted}/matched_trials.json`);
    expect(envelope.trials[0].fixture_digest).toBe('a-confirmation-block-0');
    expect(schemaProblem('matched-trials', envelope)).toBeNull();
    envelope.trials[0].candidate_digest = 'sha256:not-hex';
    expect(schemaProblem('matched-trials', envelope)).toMatch(/^\$\.trials\[0\]\.candidate_digest: /);
  });

  it.each<[string, (d: any) => void, RegExp]>([
    ['a wrong lifecycle', (d) => (d.lifecycle = 'bogus'), /^\$\.lifecycle: must be one of/],
    ['an extra property', (d) => (d.extra = 1), /unexpected property "extra"/],
    ['a missing property', (d) => delete d.created_at, /missing property "created_at"/],
    ['a bool seed count', (d) => (d.source_generation = true), /^\$\.source_generation: /],
    ['a float generation', (d) => (d.source_generation = 1.5), /^\$\.source_generation: /],
    ['a string score in the comparison', (d) => (d.comparison.mean_effect = '0.3'), /^\$\.comparison\.mean_effect: /],
  ])('a record with %s is refused, naming the JSON path', (_name, mutate, message) => {
    const record = read(`${promoted}/record.json`);
    mutate(record);
    expect(schemaProblem('record-v2', record)).toMatch(message);
  });

  it('trial type confusions are refused: bool or float seed, string or null score, string validity', () => {
    for (const change of [
      {seed: true},
      {seed: 1.5},
      {candidate_score: '0.5'},
      {incumbent_score: null},
      {candidate_valid: 'true'},
      {incumbent_valid: 1},
    ]) {
      const envelope = read(`${promoted}/matched_trials.json`);
      Object.assign(envelope.trials[1], change);
      expect(schemaProblem('matched-trials', envelope)).toMatch(/^\$\.trials\[1\]\./);
    }
  });
});
