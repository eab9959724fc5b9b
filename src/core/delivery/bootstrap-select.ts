import {isPresent} from '../../model/bundle/element-state.js';
import {prettyJson, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {isSecretKind} from '../../model/delivery/bootstrap-text.js';
import type {PackageCandidate} from '../../model/delivery/bootstrap-render.js';
import type {BundleComponent} from '../../model/bundle/component.js';
import {CURATION_LIMITS, type Curation, type HandoffRevision} from '../../model/delivery/curation.js';
import type {KnowledgeStore, ScenarioStore} from '../../store/index.js';
import {requireSignedServing} from '../signing/signed-serving.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';
import {currentCuration} from '../../store/kinds/delivery/curation.js';
import {readHandoffAt} from '../../store/kinds/delivery/handoff.js';

/** The components a package may take from one bootstrap package. */
const MAX_CURATED = 6;

/** A scenario taking part: its store, its curation and the bundle that serves it. */
export interface Participant {
  scenario: string;
  store: ScenarioStore;
  curation: Curation;
  bundle_digest: string;
  components: readonly BundleComponent[];
}

/** What became of the references a scenario declares: the first eight are considered, each counted once. */
export interface ReferenceCounts {
  declared: number;
  considered: number;
  participating: number;
  missing: number;
  ungranted: number;
}

/** The bundle serving a scenario's sessions: the one routing chose for the session (`digest`), else the active one. */
function serving(
  store: ScenarioStore,
  digest?: string,
): {bundle_digest: string; components: readonly BundleComponent[]} | null {
  // a reference's active bundle: routing checked the scenario's own
  if (digest === undefined) requireSignedServing(store);
  const chosen = digest ?? readActive(store)?.bundle_digest;
  if (chosen === undefined) return null;
  const bundle = readBundle(store, chosen);
  if (!bundle)
    fail(
      'CORRUPT_FILE',
      `${store.guard.relative(store.paths.bundle(chosen))} is missing: the serving bundle of ` +
        `"${store.scenario}" cannot be read`,
    );
  // a non-present component is never rendered or recalled
  return {bundle_digest: bundle.digest, components: bundle.components.filter(isPresent)};
}

/**
 * The current scenario, then each of its first eight references that exists
 * and grants it read access. An ungranted or missing reference is skipped
 * and counted, not fatal (the public implementation refuses the request).
 */
export function participants(
  knowledge: KnowledgeStore,
  scenario: string,
  servingDigest?: string,
): {participants: Participant[]; references: ReferenceCounts} {
  const store = knowledge.scenario(scenario);
  const own = serving(store, servingDigest);
  if (!own) fail('NOT_INITIALIZED', `scenario "${scenario}" has no active bundle; run autoctx init first`, {scenario});
  const curation = currentCuration(store);
  const out: Participant[] = [{scenario, store, curation, ...own}];
  const considered = curation.references.slice(0, CURATION_LIMITS.referencesConsidered);
  const counts: ReferenceCounts = {
    declared: curation.references.length,
    considered: considered.length,
    participating: 0,
    missing: 0,
    ungranted: 0,
  };
  const known = new Set(knowledge.listScenarios());
  for (const name of considered) {
    if (!known.has(name)) {
      counts.missing++;
      continue;
    }
    const ref = knowledge.scenario(name);
    const refCuration = currentCuration(ref);
    const bundle = refCuration.grants.includes(scenario) ? serving(ref) : null;
    if (!refCuration.grants.includes(scenario)) counts.ungranted++;
    else if (!bundle) counts.missing++;
    else {
      counts.participating++;
      out.push({scenario: name, store: ref, curation: refCuration, ...bundle});
    }
  }
  return {participants: out, references: counts};
}

/** A component as a package candidate. */
export function componentCandidate(scenario: string, c: BundleComponent): PackageCandidate {
  return {
    kind: 'component',
    scenario,
    component_kind: c.kind,
    component_key: c.key,
    component_digest: c.digest,
    handoff_id: null,
    revision: null,
    handoff_digest: null,
    body: c.content,
  };
}

/**
 * An exact handoff revision of the current scenario as a candidate (HANDOFF_NOT_FOUND, exit 2, when it has none such).
 */
export function handoffCandidate(
  store: ScenarioStore,
  curation: Curation,
  ref: {id: string; revision: number},
): PackageCandidate {
  const head = curation.handoffs.find((h) => h.id === ref.id);
  if (!head || ref.revision > head.revision) {
    const known = head ? ` (${ref.id} has revisions 1 to ${head.revision})` : '';
    fail('HANDOFF_NOT_FOUND', `scenario "${store.scenario}" has no handoff ${ref.id}@${ref.revision}${known}`, {
      scenario: store.scenario,
    });
  }
  // The revision is the one the curation's head vouches for, through the chain from the head back to it.
  let expected = head.document_digest;
  let doc: HandoffRevision | null = null;
  for (let rev = head.revision; rev >= ref.revision; rev--) {
    doc = /^[0-9a-f]{64}$/.test(expected) ? readHandoffAt(store, ref.id, expected, rev) : null;
    if (!doc || stableDigest(doc) !== expected) {
      const rel = store.guard.relative(
        /^[0-9a-f]{64}$/.test(expected)
          ? store.paths.handoffRevision(ref.id, expected)
          : store.paths.handoffDir(ref.id),
      );
      fail(
        'INTEGRITY',
        `${rel} is missing or is not the revision its successor (or curation.json) names; run autoctx verify`,
        {file: rel},
      );
    }
    expected = doc.previous_document_digest ?? '';
  }
  if (!doc)
    fail('HANDOFF_NOT_FOUND', `scenario "${store.scenario}" has no handoff ${ref.id}@${ref.revision}`, {
      scenario: store.scenario,
    });
  return {
    kind: 'handoff',
    scenario: store.scenario,
    component_kind: null,
    component_key: null,
    component_digest: null,
    handoff_id: doc.id,
    revision: doc.revision,
    handoff_digest: doc.content_digest,
    body: prettyJson(doc.content).trimEnd(),
  };
}

/**
 * The package's candidates, in order (B.7): the exact handoff first, then
 * up to six tagged components, the current scenario's tags in curated
 * order, then each participating reference's. A tag counts only when its
 * exact digest is in the serving bundle, and never for a secret kind.
 */
export function selectCandidates(
  list: readonly Participant[],
  handoff: {id: string; revision: number} | null,
): PackageCandidate[] {
  const out: PackageCandidate[] = [];
  if (handoff) out.push(handoffCandidate(list[0]!.store, list[0]!.curation, handoff));
  let curated = 0;
  for (const p of list) {
    const byDigest = new Map(p.components.map((c) => [c.digest, c]));
    for (const tag of p.curation.tags.slice(0, CURATION_LIMITS.tags)) {
      if (curated === MAX_CURATED) return out;
      const c = byDigest.get(tag.component_digest);
      if (!c || isSecretKind(c.kind, c.key)) continue;
      out.push(componentCandidate(p.scenario, c));
      curated++;
    }
  }
  return out;
}
