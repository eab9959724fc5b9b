import {Findings as KindFindings, type CheckedStore} from './findings.js';
import type {ScenarioStore} from './scenario-store.js';

/**
 * verify's findings for one scenario, with the whole scenario store behind
 * them: what the checks in the core work with. The document kinds' checks see
 * only the part of the store that `CheckedStore` names (store/findings.ts),
 * so that the kinds, which the store imports, import nothing that imports the
 * store.
 */
export type ScenarioFindings = KindFindings<ScenarioStore>;

/** `new Findings(store, …)` gives the findings of that store; `Findings` as a type is the scenario store's. */
export const Findings = KindFindings;
export type Findings = ScenarioFindings;

/**
 * The findings a step of the generated list receives, as the scenario's: verify makes every
 * Findings over a ScenarioStore, and the steps the core declares read the whole store.
 */
export function scenarioFindings(c: KindFindings<CheckedStore>): ScenarioFindings {
  return c as ScenarioFindings;
}
