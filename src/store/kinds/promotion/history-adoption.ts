import {fail} from '../../../errors.js';
import type {HistoryAdoption} from '../../../model/promotion/record-history.js';
import {readDocument} from '../../documents.js';
import {exists, isDirectory, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import type {CandidateCheck, ScenarioCheck, StartCheck} from '../common/kind-steps.js';

/** context_bundles/record_histories.json: since when the scenario keeps record histories (autoctx addition). */
export const ADOPTION_SCHEMA = 'record-histories' as const;
const HEX64 = /^[0-9a-f]{64}$/;

/** The adoption as verify and repair use it: null when the scenario keeps no histories yet. */
export type AdoptionRead = {adopted_at: string; predating: ReadonlySet<string>} | null;

export function readAdoption(ctx: KindContext): AdoptionRead {
  const doc = readDocument<HistoryAdoption>(ctx.guard, ctx.paths.historyAdoption, ADOPTION_SCHEMA, (value) => {
    const a = value as unknown as HistoryAdoption;
    if (a.scenario !== ctx.scenario)
      fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(a.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
    if (a.predating.some((d, i) => i > 0 && a.predating[i - 1]! >= d))
      fail('INVALID_INPUT', 'predating must be sorted, without repeats');
    return a;
  });
  return doc === null ? null : {adopted_at: doc.adopted_at, predating: new Set(doc.predating)};
}

/**
 * Whether a candidate was written by another implementation (or an earlier
 * autoctx) before autoctx kept histories in this scenario: the scenario keeps
 * none yet, or its adoption lists the candidate as predating. Such a
 * candidate may lack what the Python implementation's first store never wrote
 * (evaluator_plan.json, manifest_diff.json); an autoctx candidate may not.
 */
export function predatesHistories(adoption: AdoptionRead | undefined, digest: string): boolean {
  return adoption === null || (adoption !== undefined && adoption.predating.has(digest));
}

/**
 * Before the first entry of any record history in the scenario: write down
 * which candidates already have a record and no history (written by an
 * earlier autoctx or by the Python implementation), so that every other
 * candidate without one is known to have lost it. One stat when it exists.
 */
export function ensureAdoption(ctx: KindContext, at: string): void {
  if (exists(ctx.paths.historyAdoption)) return;
  const predating = listDir(ctx.guard, ctx.paths.candidatesDir)
    .filter((e) => e.isDirectory() && HEX64.test(e.name))
    .map((e) => e.name)
    .filter((d) => exists(ctx.paths.record(d)) && !isDirectory(ctx.paths.recordHistoryDir(d)))
    .sort();
  const doc: HistoryAdoption = {schema_version: 1, scenario: ctx.scenario, adopted_at: at, predating};
  ctx.writer.createDocument(ctx.paths.historyAdoption, ADOPTION_SCHEMA, doc);
}

/** verify: the adoption document, when there is one, is valid and for this scenario. Undefined when refused. */
export function verifyAdoption(c: Findings): AdoptionRead | undefined {
  const file = c.store.paths.historyAdoption;
  return c.attempt(file, () => readAdoption(c.store));
}

declare module '../common/kind-steps.js' {
  interface ScenarioFacts {
    /** Since when the scenario keeps record histories (undefined: its file could not be read). */
    adoption: AdoptionRead | undefined;
  }
  interface CandidateFacts {
    /** Written before autoctx kept histories here. */
    predating: boolean;
  }
}

export const adoptionCheck: StartCheck = {
  order: 100,
  start(c, facts) {
    facts.adoption = verifyAdoption(c);
  },
};

export const predatingCheck: CandidateCheck = {
  order: 450,
  candidate(_c, digest, facts, scenario) {
    facts.predating = predatesHistories(scenario.adoption, digest);
  },
};

/** Once for the scenario, not once per candidate that keeps a history. */
export const adoptionMissingCheck: ScenarioCheck = {
  order: 50,
  scenario(c, view) {
    if (view.facts.adoption === null && view.candidates.some((x) => x.facts.historyKept)) {
      c.error(
        c.store.paths.historyAdoption,
        'MISSING_RECORD_HISTORY',
        `${c.rel(c.store.paths.historyAdoption)} is missing, but candidates keep record histories`,
      );
    }
  },
};
