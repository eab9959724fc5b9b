import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import ts from 'typescript';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {expectSnapshotFile} from '../helpers/snapshot-file.js';

/**
 * What each entry point of package.json "exports" exports, exactly: test/public/exports.snapshot.json.
 * Removing an export by accident, or adding one, is a failing test and a visible diff. To change the
 * public surface deliberately: `npm run build`, then
 *   AUTOCTX_UPDATE_SNAPSHOTS=1 NODE_OPTIONS=--experimental-vm-modules npx jest test/public/exports.test.ts
 * and commit the snapshot's diff with the change (and say so in docs/compatibility.md).
 */
const SNAPSHOT = path.join(PROJECT_ROOT, 'test/public/exports.snapshot.json');

function importInNode(code: string): string {
  // The package imports itself by name, through package.json "exports", as users do.
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {cwd: PROJECT_ROOT, encoding: 'utf8'});
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.trim();
}

/** The names each declaration file exports, types included, as TypeScript sees them. */
function declaredNames(entries: Record<string, string>): Record<string, string[]> {
  const program = ts.createProgram(Object.values(entries), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  return Object.fromEntries(
    Object.entries(entries).map(([entry, file]) => {
      const symbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
      return [
        entry,
        checker
          .getExportsOfModule(symbol)
          .map((s) => s.name)
          .sort(),
      ];
    }),
  );
}

describe('library entry points', () => {
  it('export exactly the names of the committed snapshot, at run time and in the declarations', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | {types: string; import: string}>;
    };
    const entries = Object.entries(pkg.exports).filter(
      (e): e is [string, {types: string; import: string}] => typeof e[1] !== 'string',
    );
    const runtime = JSON.parse(
      importInNode(
        `const out = {};
        for (const name of ${JSON.stringify(entries.map(([entry]) => entry))}) out[name] = ` +
          `Object.keys(await import(name === '.' ? 'autoctx' : 'autoctx' + name.slice(1))).sort();
        console.log(JSON.stringify(out));`,
      ),
    ) as Record<string, string[]>;
    const declared = declaredNames(
      Object.fromEntries(entries.map(([entry, e]) => [entry, path.join(PROJECT_ROOT, e.types)])),
    );
    const surface = Object.fromEntries(
      entries.map(([entry]) => [entry, {values: runtime[entry], declared: declared[entry]}]),
    );
    expect(Object.keys(surface)).toEqual(['.', './context-bundles', './stats', './bootstrap', './release']);
    expectSnapshotFile(SNAPSHOT, surface);
  });

  it('autoctx/stats exports the statistics with TypeScript declarations', () => {
    const out = JSON.parse(
      importInNode(
        `import * as s from 'autoctx/stats';
        console.log(JSON.stringify({
          keys: Object.keys(s).sort(),
          interval: s.pairedConfidenceInterval([0.31000000000000005, 0.32000000000000006], ` +
          `2.241402727605, 2),
          one: s.pairedConfidenceInterval([0.3], 1.96, 1),
          z: s.requiredConfidenceZ(0.025),
          alpha: s.campaignAlphaForCandidate({familywise_alpha: 0.05, allocation_decay: ` +
          `0.5, min_independent_confirmation_blocks: 2, require_disjoint_lane_blocks: true, ` +
          `robust_method: 'cluster_t', effect_lower_bound: -1, effect_upper_bound: 1}, 1),
        }));`,
      ),
    );
    // The interval recorded by the Python reference in the sample tree, bit for bit.
    expect(out.interval).toEqual({mean: 0.31500000000000006, low: 0.060384816817536435, high: 0.5696151831824636});
    expect(out.one).toEqual({mean: 0.3, low: null, high: null});
    expect(out.z).toBe(2.241402727605);
    expect(out.alpha).toBe(0.0125);
    const dts = fs.readFileSync(path.join(PROJECT_ROOT, 'dist/public/stats.d.ts'), 'utf8');
    for (const name of [
      'pairedConfidenceInterval',
      'requiredConfidenceZ',
      'campaignAlphaForCandidate',
      'evaluateMatchedTrials',
    ])
      expect(dts).toContain(name);
    const interval = fs.readFileSync(path.join(PROJECT_ROOT, 'dist/stats/interval.d.ts'), 'utf8');
    expect(interval).toMatch(
      /pairedConfidenceInterval\(effects: readonly number\[\], confidenceZ: number, maxLooks\?: number\): Interval/,
    );
    expect(interval).toMatch(/low: number \| null/);
  });

  it(
    'autoctx/bootstrap exports render, prepare, claim and recall ' + 'with declarations, and renders the same bytes',
    () => {
      const out = JSON.parse(
        importInNode(
          `import * as b from 'autoctx/bootstrap';
        const item = {kind: 'component', scenario: 'demo', component_kind: 'hints', ` +
            `component_key: 'k', component_digest: '${'a'.repeat(64)}', handoff_id: null, revision: null, ` +
            `handoff_digest: null, body: 'x'.repeat(2001)};
        const r = b.renderPackage([item], {maxBytes: 4096});
        console.log(JSON.stringify({keys: Object.keys(b).sort(), bytes: r.content_bytes, ` +
            `truncated: r.items[0].truncated, secret: b.isSecretKind('hints', 'API.Key')}));`,
        ),
      );
      expect(out).toMatchObject({truncated: true, secret: true});
      expect(out.bytes).toBeLessThanOrEqual(4096);
      const dts = fs.readFileSync(path.join(PROJECT_ROOT, 'dist/public/bootstrap.d.ts'), 'utf8');
      for (const name of ['render', 'prepare', 'claim', 'recall', 'PrepareResult', 'RecallResult', 'BootstrapReceipt'])
        expect(dts).toContain(name);
    },
  );

  it(
    'autoctx/context-bundles exports the surface of the ' + 'reference TypeScript module (the snapshot above holds it)',
    () => {
      const snapshot = JSON.parse(fs.readFileSync(SNAPSHOT, 'utf8')) as Record<string, {values: string[]}>;
      expect(snapshot['./context-bundles']!.values).toEqual(
        expect.arrayContaining([
          'CONTEXT_BUNDLE_SCHEMA_VERSION',
          'DEFAULT_CONFIRMATION_POLICY',
          'DEFAULT_CAMPAIGN_FALSE_PROMOTION_POLICY',
          'canonicalJson',
          'stableDigest',
          'createBundleComponent',
          'createJsonBundleComponent',
          'createContextBundle',
          'contextBundleManifestDiff',
          'validateContextBundle',
          'matchedTrialPairKey',
          'evaluateMatchedTrials',
          'campaignAlphaForCandidate',
          'requiredConfidenceZ',
          'campaignAdjustedConfirmationPolicy',
          'createCandidateRiskReservation',
          'createCampaignFalsePromotionState',
          'createCandidateFixtureReservation',
          'evaluateCampaignFalsePromotionEvidence',
        ]),
      );
    },
  );
});
