import {execFileSync, spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {
  CANDIDATE_CHECKS,
  SCENARIO_CHECKS,
  SCENARIO_REPAIRS,
  START_CHECKS,
} from '../../src/core/common/kind-steps.generated.js';

/**
 * verify and repair run the steps the document kinds declare, from a list
 * scripts/gen-kinds.js writes (src/core/common/kind-steps.generated.ts): no
 * hand-edited hub. The list checked in is the one the declarations give.
 */
const GENERATOR = path.join(PROJECT_ROOT, 'scripts/gen-kinds.js');
const GENERATED = path.join(PROJECT_ROOT, 'src/core/common/kind-steps.generated.ts');

describe('the generated list of kind steps', () => {
  it('is what scripts/gen-kinds.js writes from the declarations', () => {
    const run = spawnSync(process.execPath, [GENERATOR, '--check'], {encoding: 'utf8'});
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('is refused by --check when it is out of date', () => {
    const text = fs.readFileSync(GENERATED, 'utf8');
    try {
      fs.writeFileSync(GENERATED, text.replace(/^ {2}\w+, \/\/ .*\n/m, ''));
      const run = spawnSync(process.execPath, [GENERATOR, '--check'], {encoding: 'utf8'});
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('kind-steps.generated.ts is out of date');
    } finally {
      fs.writeFileSync(GENERATED, text);
    }
  });

  it('runs each list in the strict order of its order keys', () => {
    for (const list of [START_CHECKS, CANDIDATE_CHECKS, SCENARIO_CHECKS, SCENARIO_REPAIRS]) {
      const orders = list.map((s) => s.order);
      expect(orders).toEqual([...orders].sort((a, b) => a - b));
      expect(new Set(orders).size).toBe(orders.length);
    }
  });

  it('lists every step a module under src/store/kinds or src/core declares', () => {
    const grep = execFileSync(
      'grep',
      [
        '-rhoE',
        '^export const \\w+: (StartCheck|CandidateCheck|ScenarioCheck|ScenarioRepair) =',
        'src/store/kinds',
        'src/core',
      ],
      {cwd: PROJECT_ROOT, encoding: 'utf8'},
    );
    const declared = grep.trim().split('\n').length;
    expect(START_CHECKS.length + CANDIDATE_CHECKS.length + SCENARIO_CHECKS.length + SCENARIO_REPAIRS.length).toBe(
      declared,
    );
  });
});
