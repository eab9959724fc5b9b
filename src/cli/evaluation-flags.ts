import {signingKeyFlag} from './release-flags.js';
import * as Flags from '@oclif/core/flags';
import {
  evaluateCandidate,
  type EvaluateOptions,
  type EvaluateResult,
  type ProgressEvent,
} from '../core/evaluation/evaluate.js';
import {DEFAULT_EVALUATOR_TIMEOUT_SECONDS} from '../core/common/defaults.js';
import {withTeamDefaults} from '../core/common/team-defaults.js';
import {digestArg, integerFlag, secondsFlag, sourceFlag, textFlag} from './flags.js';
import {paint, short} from './style.js';
import {NEW_PLAN_CONFIRMATION_POLICY} from '../model/evaluation/policy.js';
import {parseGuardrail} from '../model/promotion/guardrails.js';

export const candidateArg = {
  candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix (8+ hex characters).'),
};

/** The flags of screen and confirm, beside the writing commands' base flags. */
export const evaluationFlags = {
  evaluator: textFlag('evaluator', {
    summary:
      'Evaluator command, run through sh -c (see the evaluator protocol in the README); default: ' +
      '"evaluator" in autoctx.config.json.',
    helpValue: 'CMD',
  }),
  fixtures: sourceFlag('fixtures', {
    summary:
      'Fixtures file: JSON Lines, one {"fixture", "initial_state", "observation", "lane"?} a line; ' +
      'default: "fixtures" in autoctx.config.json.',
  }),
  policy: sourceFlag('policy', {
    summary:
      "Confirmation policy JSON (missing fields take the bound plan's values, or for a new plan the defaults " +
      '16/6/20/16, min_effect 0, z 1.96).',
  }),
  'seeds-per-fixture': integerFlag('seeds-per-fixture', {
    summary: 'Seeds per fixture (default 1).',
    min: 1,
    max: 1_000_000,
    helpValue: 'K',
  }),
  cohort: textFlag('cohort', {
    summary: 'Cohort label (default <run-id>:<evaluator-epoch>:generation:<g>).',
    helpValue: 'C',
  }),
  'evaluator-mode': Flags.string({
    summary: 'per-arm (default: one process per arm) or persistent (JSON Lines).',
    options: ['per-arm', 'persistent'],
    helpValue: 'MODE',
  }),
  'evaluator-version': textFlag('evaluator-version', {
    summary: 'A version label bound into the plan with the command.',
    helpValue: 'LABEL',
  }),
  timeout: secondsFlag('timeout', {
    summary: `Seconds per arm before the evaluator is stopped (default ${DEFAULT_EVALUATOR_TIMEOUT_SECONDS}).`,
  }),
  concurrency: integerFlag('concurrency', {
    summary: 'Pairs evaluated at once (default 1); results are committed in plan order.',
    min: 1,
    max: 1024,
  }),
  audit: textFlag('audit', {
    summary: 'Audit command for the inconclusive_gate, integrity_alert and pre_promotion checkpoints.',
    helpValue: 'CMD',
  }),
  campaign: textFlag('campaign', {
    summary: 'Campaign id: reserve alpha and fixtures for this candidate before evaluating it.',
    helpValue: 'ID',
  }),
  'campaign-policy': sourceFlag('campaign-policy', {
    summary: 'Campaign policy JSON (first use; later it must equal the stored one).',
  }),
  rebind: Flags.boolean({
    summary:
      'Bind this evaluator and plan in place of the bound ones; allowed only while no trial is recorded ' +
      '(the old plan is kept in superseded_plans/).',
  }),
  guardrail: Flags.custom<string>({parse: async (input: string) => parseGuardrail(input).text})({
    summary:
      'A promotion guardrail bound into the plan, e.g. "p90(latency_ms) <= +10%" or "median(cost_usd) <= 1.2x" ' +
      '(repeatable; see docs/guardrails.md).',
    helpValue: 'EXPR',
    multiple: true,
  }),
  quiet: Flags.boolean({summary: 'No progress lines on stderr.'}),
  artifacts: textFlag('artifacts', {
    summary:
      'Folder the evaluator keeps trial artifacts in (AUTOCTX_ARTIFACT_DIR; default knowledge/.state/artifacts); ' +
      'never inside the knowledge tree outside .state.',
    helpValue: 'DIR',
  }),
  'signing-key': signingKeyFlag,
};

export type EvaluationFlags = {
  knowledge?: string | undefined;
  scenario?: string | undefined;
  evaluator?: string | undefined;
  fixtures?: string | undefined;
  policy?: string | undefined;
  'seeds-per-fixture'?: number | undefined;
  cohort?: string | undefined;
  'evaluator-mode'?: string | undefined;
  'evaluator-version'?: string | undefined;
  timeout?: number | undefined;
  concurrency?: number | undefined;
  audit?: string | undefined;
  campaign?: string | undefined;
  'campaign-policy'?: string | undefined;
  'signing-key'?: string | undefined;
  artifacts?: string | undefined;
  quiet: boolean;
  rebind?: boolean | undefined;
  guardrail?: string[] | undefined;
  'lock-timeout': number;
};

/**
 * The core's options from flags that oclif has already parsed and checked,
 * with the team's defaults (knowledge/autoctx.config.json) where a flag was
 * not given; `take` names what may come from that file.
 */
export function evaluationOptions(
  candidate: string,
  mode: 'screen' | 'confirm',
  flags: EvaluationFlags,
  onProgress?: (e: ProgressEvent) => void,
  take?: Parameters<typeof withTeamDefaults>[1],
): EvaluateOptions {
  const filled = withTeamDefaults(
    {
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      evaluator: flags.evaluator,
      evaluatorMode: flags['evaluator-mode'] as 'per-arm' | 'persistent' | undefined,
      fixtures: flags.fixtures,
      policyFile: flags.policy,
      concurrency: flags.concurrency,
    },
    take,
  );
  return {
    knowledge: flags.knowledge,
    scenario: flags.scenario,
    candidate,
    mode,
    evaluator: filled.evaluator!,
    evaluatorMode: filled.evaluatorMode,
    evaluatorVersion: flags['evaluator-version'],
    fixtures: filled.fixtures,
    policyFile: filled.policyFile,
    seedsPerFixture: flags['seeds-per-fixture'],
    cohort: flags.cohort,
    timeoutSeconds: flags.timeout,
    concurrency: filled.concurrency,
    audit: flags.audit,
    campaign: flags.campaign,
    campaignPolicyFile: flags['campaign-policy'],
    rebind: flags.rebind,
    guardrails: flags.guardrail,
    lockTimeout: flags['lock-timeout'],
    signingKey: flags['signing-key'],
    artifacts: flags.artifacts,
    onProgress,
  };
}

/**
 * How a run shows its progress on stderr: the live view on a terminal (not in
 * CI), else one plain line per event, nothing with --quiet.
 */
export async function progressOutput(
  quiet: boolean,
): Promise<{onProgress: ((e: ProgressEvent) => void) | undefined; stop: () => void}> {
  if (quiet) return {onProgress: undefined, stop: () => undefined};
  if (process.stderr.isTTY && !process.env.CI) {
    const {startLiveView} = await import('./live-view.js');
    const view = startLiveView();
    return {onProgress: view.update, stop: view.stop};
  }
  return {onProgress: (e) => process.stderr.write(`${progressLine(e)}\n`), stop: () => undefined};
}

/**
 * screen and confirm: check every flag and default, then evaluate with the progress output, stopped whatever happens.
 */
export async function runEvaluation(
  candidate: string,
  mode: 'screen' | 'confirm',
  flags: EvaluationFlags,
): Promise<EvaluateResult> {
  const options = evaluationOptions(candidate, mode, flags); // every flag and default checked before the view starts
  const view = await progressOutput(flags.quiet);
  try {
    return await evaluateCandidate({...options, onProgress: view.onProgress});
  } finally {
    view.stop();
  }
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(4));

/** One plain progress line per event, for logs and pipes. */
export function progressLine(e: ProgressEvent): string {
  const c = e.counts;
  const p = e.planned;
  const d = e.decision;
  const where = e.type === 'pair' ? `${e.lane} ${e.fixture} seed ${e.seed}` : e.type;
  return (
    `autoctx: ${where} | screen ${c.screen}/${p.screen} confirmation ${c.confirmation}/${p.confirmation} ` +
    `heldout ${c.heldout}/${p.heldout} | mean ${fmt(d?.mean_effect)} [${fmt(d?.confidence_low)}, ` +
    `${fmt(d?.confidence_high)}] vs ${e.min_effect} | ${d?.decision ?? 'starting'}`
  );
}

/**
 * After a terminal negative result, how to evaluate the idea again properly:
 * the digest keeps its evidence and its lifecycle (it is never re-evaluated
 * afresh), so a genuinely new variant is proposed and given enough pairs.
 */
function nextStep(result: EvaluateResult): string[] {
  if (result.status !== 'rejected' && result.status !== 'inconclusive') return [];
  const c = result.comparison;
  const atScreen = c.confirmation_pairs === 0 && c.heldout_pairs === 0 && c.screen_pairs > 0;
  const wider = NEW_PLAN_CONFIRMATION_POLICY.min_screen_pairs;
  const how =
    result.status === 'inconclusive'
      ? 'and give it a larger "max_confirmation_pairs" (more fixtures)'
      : atScreen && c.screen_pairs < wider
        ? `and screen it on more pairs than this screen's ${c.screen_pairs} (new plans screen ${wider}: omit ` +
          `"min_screen_pairs" from --policy)`
        : c.heldout_pairs > 0 && c.heldout_pairs < NEW_PLAN_CONFIRMATION_POLICY.min_heldout_pairs
          ? `and give its held-out lane more pairs than this one's ${c.heldout_pairs} (new plans hold out ` +
            `${NEW_PLAN_CONFIRMATION_POLICY.min_heldout_pairs}: omit "min_heldout_pairs" from --policy)`
          : 'and evaluate it with its own fixtures';
  return [
    `  ${short(result.candidate_digest)} stays ${result.status} with this evidence; it is not evaluated again.`,
    `  To try the idea again, propose a changed variant (other content is another digest; the same content is`,
    `  this candidate) ${how}; see docs/choosing-a-policy.md`,
  ];
}

export function summary(result: EvaluateResult): string[] {
  const c = result.comparison;
  const color =
    result.status === 'confirmed' || result.status === 'screened'
      ? paint.green
      : result.status === 'needs_more_evidence'
        ? paint.yellow
        : paint.red;
  return [
    `${color(result.status)} ${short(result.candidate_digest)} against ${short(result.parent_digest)}: ${c.reason}`,
    `  pairs: screen ${c.screen_pairs}, confirmation ${c.confirmation_pairs}, held-out ` +
      `${c.heldout_pairs} (${result.pairs_evaluated} evaluated now); mean ${fmt(c.mean_effect)} ` +
      `[${fmt(c.confidence_low)}, ${fmt(c.confidence_high)}]`,
    ...nextStep(result),
    ...(result.superseded_plan_digest
      ? [
          `  rebound: plan ${result.superseded_plan_digest.slice(0, 12)} is superseded by ` +
            `${result.plan_digest.slice(0, 12)} (kept in superseded_plans/)`,
        ]
      : []),
  ];
}
