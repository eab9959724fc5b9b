import type {CandidateRecord} from '../../../model/promotion/records.js';
import type {Findings} from '../../findings.js';
import type {ScenarioStore} from '../../scenario-store.js';

/**
 * The checks and repair steps a document kind declares next to its reader and
 * writer. `verify` and `repair` (src/core/common) run every step that
 * src/core/common/kind-steps.generated.ts lists, in the order of their
 * `order` keys; scripts/gen-kinds.js writes that list from the declarations
 * (`export const name: CandidateCheck = {...}` and its siblings), so adding a
 * kind touches no list by hand.
 *
 * What a check finds for later checks is a fact: a kind names the facts it
 * provides by augmenting CandidateFacts or ScenarioFacts
 * (`declare module '../common/kind-steps.js' {interface CandidateFacts {...}}`),
 * and later checks read them without importing the kind that provides them.
 */
// biome-ignore lint/suspicious/noEmptyInterface: the kinds augment it (declaration merging needs an interface)
export interface CandidateFacts {}
// biome-ignore lint/suspicious/noEmptyInterface: the kinds augment it (declaration merging needs an interface)
export interface ScenarioFacts {}

/** Runs once per scenario before the candidates are checked; what it finds is a scenario fact. */
export interface StartCheck {
  readonly order: number;
  start(c: Findings, facts: Partial<ScenarioFacts>): void;
}

/** Runs once per candidate, in order; the candidate's facts so far are in `facts`. */
export interface CandidateCheck {
  readonly order: number;
  candidate(
    c: Findings,
    digest: string,
    facts: Partial<CandidateFacts>,
    scenario: Readonly<Partial<ScenarioFacts>>,
  ): void;
}

/** What the candidates' checks found, for the checks of the whole scenario. */
export interface ScenarioView {
  readonly facts: Readonly<Partial<ScenarioFacts>>;
  /** Every candidate checked, in the order the candidates are listed (complete: none of its checks was cut short). */
  readonly candidates: ReadonlyArray<{
    readonly digest: string;
    readonly facts: Readonly<Partial<CandidateFacts>>;
    readonly complete: boolean;
  }>;
  /** The records of the candidates whose checks all ran. */
  readonly records: Map<string, CandidateRecord>;
}

/** Runs once per scenario after the candidates and the manifests; each is guarded on its own. */
export interface ScenarioCheck {
  readonly order: number;
  scenario(c: Findings, view: ScenarioView): void;
}

/** One scenario's repair, under its lock: what each step did and what it left for a person. */
export interface RepairRun {
  readonly store: ScenarioStore;
  /** True when the scenario signs its records. */
  readonly signed: boolean;
  /** The path as repair reports it (relative to the root). */
  readonly rel: (file: string) => string;
  /** The time a step records (the command's clock). */
  readonly now: () => Date;
  /** The command's --actor, when given (a signed step signs as it). */
  readonly actor: string | undefined;
  readonly actions: string[];
  readonly remaining: string[];
}

/** One repair step of a scenario (under its lock). */
export interface ScenarioRepair {
  readonly order: number;
  repair(run: RepairRun): void;
}
