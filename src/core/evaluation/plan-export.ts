import {createMatchedTrial} from '../../model/evaluation/trial.js';
import {assertOutputFolder, writeOutputFile} from '../../store/io/outputs.js';
import {planRequestOf, type EvaluateOptions} from './evaluate.js';
import {prepareRun} from './run/prepare.js';

/** The schema of one exported work unit line. */
export const WORK_UNIT_SCHEMA = 'autoctx.work-unit.v1';

export interface ExportSummary {
  status: 'exported';
  scenario: string;
  candidate_digest: string;
  plan_digest: string;
  /** The plan a --rebind replaced. */
  superseded_plan_digest?: string;
  units: number;
}

export interface ExportResult {
  summary: ExportSummary;
  /** The units as JSON Lines, for a caller that prints them (--out -). */
  lines: string[];
}

/**
 * Bind the plan for external evaluation (the evaluator identity is a label
 * naming the engine) and list the units not yet recorded, in plan order, each
 * with everything an evaluator request holds for both arms. With `out` the
 * lines are written there (whole or not at all); with null they are returned.
 */
export async function exportPlan(
  options: Omit<EvaluateOptions, 'mode' | 'evaluatorMode'> & {out: string | null},
): Promise<ExportResult> {
  if (options.out !== null) assertOutputFolder(options.out); // before the plan is bound: bad input changes nothing
  const run = await prepareRun({
    ...options,
    mode: 'confirm',
    request: planRequestOf({...options, mode: 'confirm', evaluatorMode: 'external'}),
  });
  try {
    const done = new Set(run.trials.map((t) => `${t.fixture_digest}\u0000${t.seed}`));
    const lines: string[] = [];
    run.plan.plan.units.forEach((u, index) => {
      if (done.has(`${u.fixture_digest}\u0000${u.seed}`)) return;
      const f = run.fixtures.get(u.fixture_digest)!;
      const pairKey = createMatchedTrial({
        candidate_digest: run.candidate.digest,
        incumbent_digest: run.incumbent.digest,
        evaluator_epoch: run.candidate.evaluator_epoch,
        cohort: run.plan.plan.cohort,
        fixture: u.fixture,
        fixture_digest: u.fixture_digest,
        seed: u.seed,
        lane: u.lane,
        candidate_score: 0,
        incumbent_score: 0,
      }).pair_key;
      lines.push(
        JSON.stringify({
          schema: WORK_UNIT_SCHEMA,
          unit_index: index,
          scenario: run.store.scenario,
          candidate_digest: run.candidate.digest,
          incumbent_digest: run.incumbent.digest,
          evaluator_epoch: run.candidate.evaluator_epoch,
          cohort: run.plan.plan.cohort,
          lane: u.lane,
          fixture: u.fixture,
          fixture_digest: u.fixture_digest,
          seed: u.seed,
          pair_key: pairKey,
          plan_digest: run.plan.plan_digest,
          arm_order: index % 2 === 0 ? ['candidate', 'incumbent'] : ['incumbent', 'candidate'],
          initial_state: f.initial_state,
          observation: f.observation,
        }),
      );
    });
    if (options.out !== null) writeOutputFile(options.out, lines.length ? `${lines.join('\n')}\n` : '');
    return {
      summary: {
        status: 'exported',
        scenario: run.store.scenario,
        candidate_digest: run.candidate.digest,
        plan_digest: run.plan.plan_digest,
        units: lines.length,
        ...(run.rebound ? {superseded_plan_digest: run.rebound} : {}),
      },
      lines,
    };
  } finally {
    await run.release();
  }
}
