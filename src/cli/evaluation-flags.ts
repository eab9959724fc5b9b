import {Args, Flags} from '@oclif/core';
import type {EvaluateOptions, EvaluateResult, ProgressEvent} from '../core/evaluate.js';
import {EXIT} from '../errors.js';
import {lockFlags, parseLockTimeout, storeFlags} from './base-command.js';
import {paint, short} from './style.js';

export const candidateArg = {candidate: Args.string({description: 'Candidate bundle digest or a unique prefix (8+ hex characters).', required: true})};

export const evaluationFlags = {
  ...storeFlags,
  evaluator: Flags.string({summary: 'Evaluator command, run through sh -c (see the evaluator protocol in the README).', required: true, helpValue: 'CMD'}),
  fixtures: Flags.string({summary: 'Fixtures file: JSON Lines, one {"fixture", "initial_state", "observation", "lane"?} a line.', required: true, helpValue: 'FILE'}),
  policy: Flags.string({summary: 'Confirmation policy JSON (missing fields take the defaults 2/6/20/2, min_effect 0, z 1.96).', helpValue: 'FILE'}),
  'seeds-per-fixture': Flags.integer({summary: 'Seeds per fixture (default 1).', min: 1, helpValue: 'K'}),
  cohort: Flags.string({summary: 'Cohort label (default <run-id>:<evaluator-epoch>:generation:<g>).', helpValue: 'C'}),
  'evaluator-mode': Flags.string({summary: 'per-arm (default: one process per arm) or persistent (JSON Lines).', options: ['per-arm', 'persistent'], helpValue: 'MODE'}),
  'evaluator-version': Flags.string({summary: 'A version label bound into the plan with the command.', helpValue: 'LABEL'}),
  timeout: Flags.string({summary: 'Seconds per arm before the evaluator is stopped (default 120).', helpValue: 'SECONDS'}),
  concurrency: Flags.integer({summary: 'Pairs evaluated at once (default 1); results are committed in plan order.', min: 1, helpValue: 'N'}),
  audit: Flags.string({summary: 'Audit command for the inconclusive_gate, integrity_alert and pre_promotion checkpoints.', helpValue: 'CMD'}),
  campaign: Flags.string({summary: 'Campaign id: reserve alpha and fixtures for this candidate before evaluating it.', helpValue: 'ID'}),
  'campaign-policy': Flags.string({summary: 'Campaign policy JSON (first use; later it must equal the stored one).', helpValue: 'FILE'}),
  quiet: Flags.boolean({summary: 'No progress lines on stderr.'}),
  ...lockFlags,
};

export type EvaluationFlags = {
  knowledge?: string | undefined;
  scenario?: string | undefined;
  evaluator: string;
  fixtures: string;
  policy?: string | undefined;
  'seeds-per-fixture'?: number | undefined;
  cohort?: string | undefined;
  'evaluator-mode'?: string | undefined;
  'evaluator-version'?: string | undefined;
  timeout?: string | undefined;
  concurrency?: number | undefined;
  audit?: string | undefined;
  campaign?: string | undefined;
  'campaign-policy'?: string | undefined;
  quiet: boolean;
  'lock-timeout'?: string | undefined;
};

export function evaluationOptions(candidate: string, mode: 'screen' | 'confirm', flags: EvaluationFlags, onProgress?: (e: ProgressEvent) => void): EvaluateOptions {
  const timeout = flags.timeout === undefined ? 120 : Number(flags.timeout);
  return {
    knowledge: flags.knowledge,
    scenario: flags.scenario,
    candidate,
    mode,
    evaluator: flags.evaluator,
    evaluatorMode: flags['evaluator-mode'] as 'per-arm' | 'persistent' | undefined,
    evaluatorVersion: flags['evaluator-version'],
    fixtures: flags.fixtures,
    policyFile: flags.policy,
    seedsPerFixture: flags['seeds-per-fixture'],
    cohort: flags.cohort,
    timeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : Number.NaN,
    concurrency: flags.concurrency,
    audit: flags.audit,
    campaign: flags.campaign,
    campaignPolicyFile: flags['campaign-policy'],
    lockTimeout: parseLockTimeout(flags['lock-timeout']),
    onProgress,
  };
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '-' : x.toFixed(4));

/** One plain progress line per event, for logs and pipes. */
export function progressLine(e: ProgressEvent): string {
  const c = e.counts;
  const p = e.planned;
  const d = e.decision;
  const where = e.type === 'pair' ? `${e.lane} ${e.fixture} seed ${e.seed}` : e.type;
  return `autoctx: ${where} | screen ${c.screen}/${p.screen} confirmation ${c.confirmation}/${p.confirmation} heldout ${c.heldout}/${p.heldout} | mean ${fmt(d?.mean_effect)} [${fmt(d?.confidence_low)}, ${fmt(d?.confidence_high)}] vs ${e.min_effect} | ${d?.decision ?? 'starting'}`;
}

export function exitCodeFor(result: EvaluateResult): number {
  if (result.status === 'rejected' || result.status === 'inconclusive') return EXIT.REJECTED;
  if (result.status === 'needs_more_evidence') return EXIT.NEEDS_MORE_EVIDENCE;
  return EXIT.OK;
}

export function summary(result: EvaluateResult): string[] {
  const c = result.comparison;
  const color = result.status === 'confirmed' || result.status === 'screened' ? paint.green : result.status === 'needs_more_evidence' ? paint.yellow : paint.red;
  return [
    `${color(result.status)} ${short(result.candidate_digest)} against ${short(result.parent_digest)}: ${c.reason}`,
    `  pairs: screen ${c.screen_pairs}, confirmation ${c.confirmation_pairs}, held-out ${c.heldout_pairs} (${result.pairs_evaluated} evaluated now); mean ${fmt(c.mean_effect)} [${fmt(c.confidence_low)}, ${fmt(c.confidence_high)}]`,
  ];
}
