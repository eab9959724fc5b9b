import {jsonEqual} from '../../canonical/index.js';
import type {CandidateRecord} from '../../model/promotion/records.js';
import {scenarioFindings, type Findings} from '../../store/scenario-findings.js';
import type {ScenarioCheck} from '../../store/kinds/common/kind-steps.js';
import {readEvidence} from '../../store/kinds/evaluation/matched-evidence.js';
import {listPromotionIds, readPromotion} from '../../store/kinds/promotion/history.js';
import {replayCandidate} from './replay.js';

/** Replay every recorded comparison; cross-check promotion records against it. */
function checkReplays(c: Findings, records: Map<string, CandidateRecord>): void {
  const {store} = c;
  for (const [digest, record] of records) {
    if (!c.bundle(digest)) continue;
    const file = store.paths.matchedTrials(digest);
    const pairs = (x: {screen_pairs: number; confirmation_pairs: number; heldout_pairs: number} | null) =>
      x ? x.screen_pairs + x.confirmation_pairs + x.heldout_pairs : 0;
    if (!record.comparison) {
      const evidence = c.attempt(file, () => readEvidence(store, digest));
      if (evidence && evidence.trials.length > 0)
        c.warn(
          store.paths.record(digest),
          'RECORD_BEHIND_EVIDENCE',
          `${c.rel(store.paths.record(digest))} lags its evidence (an interrupted run; running it again or ` +
            `autoctx repair completes it)`,
        );
      continue;
    }
    // Legacy evidence the Python implementation wrote before it bound policies cannot be replayed until it is migrated:
    // said, not failed.
    // (read only for a record without a policy)
    const policyless =
      !record.confirmation_policy && c.attempt(file, () => readEvidence(store, digest))?.legacy === true;
    if (policyless) {
      c.warn(
        file,
        'LEGACY_EVIDENCE',
        `${c.rel(file)} is schema-1 evidence with no recorded policy, so its comparison is not replayed; ` +
          `migrate it under the policy it was recorded with: autoctx trials migrate ${digest.slice(0, 12)} ` +
          `--policy FILE`,
      );
      continue;
    }
    const r = c.attempt(file, () => replayCandidate(store, digest));
    // Only a record still before its decision can lag its evidence; a decided record that disagrees was changed.
    if (
      r &&
      r.status !== 'ok' &&
      (record.lifecycle === 'proposed' || record.lifecycle === 'screened') &&
      pairs(r.recorded) < pairs(r.replayed)
    ) {
      c.warn(
        store.paths.record(digest),
        'RECORD_BEHIND_EVIDENCE',
        `${c.rel(store.paths.record(digest))} lags its evidence (an interrupted run; running it again or ` +
          `autoctx repair completes it)`,
      );
    } else if (r && (r.status !== 'ok' || (!r.bit_exact && !c.replayTolerance))) {
      const why =
        r.status !== 'ok'
          ? 'does not reproduce'
          : 'reproduces only within the cross-runtime tolerance (pass --replay-tolerance to accept that)';
      const message =
        `${c.rel(store.paths.record(digest))}: the recorded comparison ${why} from ${c.rel(file)} (largest ` +
        `distance ${r.max_ulp} ULP)`;
      c.error(store.paths.record(digest), 'REPLAY_MISMATCH', message);
      c.error(file, 'REPLAY_MISMATCH', message);
    } else if (r && !r.bit_exact)
      c.warn(
        store.paths.record(digest),
        'REPLAY_TOLERANCE',
        `${c.rel(store.paths.record(digest))} replays within the cross-runtime tolerance (${r.max_ulp} ` +
          `ULP), not bit for bit`,
      );
  }
  for (const id of listPromotionIds(store)) {
    const p = c.attempt(store.paths.promotion(id), () => readPromotion(store, id));
    const r = p ? records.get(p.candidate_digest) : undefined;
    if (p && r?.comparison && !jsonEqual(p.comparison, r.comparison)) {
      c.error(
        store.paths.promotion(id),
        'LINEAGE_MISMATCH',
        `${c.rel(store.paths.promotion(id))}: its comparison differs from the candidate's record`,
      );
      c.error(
        store.paths.record(p.candidate_digest),
        'LINEAGE_MISMATCH',
        `${c.rel(store.paths.record(p.candidate_digest))}: its comparison differs from promotion ${id}`,
      );
    }
    const evidence = p
      ? c.attempt(store.paths.matchedTrials(p.candidate_digest), () => readEvidence(store, p.candidate_digest))
      : undefined;
    const cohorts = new Set((evidence?.trials ?? []).map((t) => t.cohort));
    if (p && cohorts.size > 0 && !cohorts.has(p.cohort))
      c.error(
        store.paths.promotion(id),
        'LINEAGE_MISMATCH',
        `${c.rel(store.paths.promotion(id))}: cohort "${p.cohort}" is not the cohort of the candidate's matched trials`,
      );
  }
}

/** verify: the replays are a use case (replay), so they are checked here, after the pointer and its history. */
export const replaysCheck: ScenarioCheck = {
  order: 500,
  scenario(c, view) {
    checkReplays(scenarioFindings(c), view.records);
  },
};
