import path from 'node:path';
import {exists, listDir} from '../../files/fs.js';
import type {BoundPlan} from '../../../model/evaluation/evaluator-plan.js';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import type {CampaignFalsePromotionState} from '../../../model/evaluation/campaign.js';
import {
  campaignStateDigest,
  legacyCampaignStateDigest,
  reservationArtifactDigest,
} from '../../../model/evaluation/evidence-digests.js';
import {readDocument} from '../../documents.js';
import type {KindContext} from '../common/kind-context.js';
import {campaignSegment} from '../../paths.js';
import type {Findings} from '../../findings.js';
import type {CandidateCheck, ScenarioCheck} from '../common/kind-steps.js';

/** promotion-risk/<campaign>/false-promotion.json: the campaign's mutable risk ledger, under the scenario lock. */
export const LEDGER_SCHEMA = 'false-promotion' as const;
/** promotion-risk/<campaign>/reservation-artifacts/<digest>.json: one immutable artifact per reservation decision. */
export const ARTIFACT_SCHEMA = 'reservation-artifact' as const;

/** A campaign ledger as stored: schema 2, or a readable schema-1 ledger without fixture history. */
export type StoredCampaign = Omit<CampaignFalsePromotionState, 'schema_version'> & {schema_version: 1 | 2};

/** The state digest a ledger must carry, by its schema. */
export function ledgerDigest(
  l: StoredCampaign | {schema_version: number; campaign_id: unknown; policy: unknown; reservations: unknown},
): string {
  return l.schema_version === 2 ? campaignStateDigest(l) : legacyCampaignStateDigest(l);
}

export function readCampaign(ctx: KindContext, campaignId: string): StoredCampaign | null {
  return readDocument<StoredCampaign>(ctx.guard, ctx.paths.campaignLedger(campaignId), LEDGER_SCHEMA, (value) => {
    const l = value as unknown as StoredCampaign;
    if (l.campaign_id !== campaignId)
      fail('INVALID_INPUT', `the ledger is for campaign ${JSON.stringify(l.campaign_id)}`);
    if (ledgerDigest(l) !== l.state_digest) fail('DIGEST_MISMATCH', 'state_digest does not match the ledger');
    return l;
  });
}

export function writeCampaign(ctx: KindContext, state: StoredCampaign): void {
  ctx.writer.replaceDocument(ctx.paths.campaignLedger(state.campaign_id), LEDGER_SCHEMA, state);
}

export function writeReservationArtifact(
  ctx: KindContext,
  campaignId: string,
  digest: string,
  artifact: Record<string, unknown>,
): boolean {
  return ctx.writer.createDocument(ctx.paths.reservationArtifact(campaignId, digest), ARTIFACT_SCHEMA, artifact);
}

export {reservationArtifactDigest};

/**
 * The campaign a plan ran under. autoctx binds it in the plan's additions;
 * the Python implementation binds none there: its campaign controller
 * reserves the candidate's fixture plan in the campaign's ledger before any
 * evaluation, so a plan of upstream's shape ran under the campaign whose
 * ledger reserves exactly its units (lane, fixture digest, seed, in plan
 * order) for its candidate, evaluator epoch and cohort. Null: no campaign.
 * Ledgers that cannot be read are left to verify's own check of them.
 */
export function planCampaign(ctx: KindContext, plan: BoundPlan): string | null {
  if (plan.additions.campaign_id !== null && plan.additions.campaign_id !== undefined)
    return plan.additions.campaign_id;
  if (!plan.upstream) return null;
  const p = plan.plan;
  const units = JSON.stringify(p.units.map((u) => [u.lane, u.fixture_digest, u.seed]));
  for (const entry of listDir(ctx.guard, ctx.paths.riskDir)) {
    if (!entry.isDirectory()) continue;
    let ledger: StoredCampaign | null = null;
    try {
      ledger = readDocument<StoredCampaign>(
        ctx.guard,
        path.join(ctx.paths.riskDir, entry.name, 'false-promotion.json'),
        LEDGER_SCHEMA,
      );
    } catch (error) {
      rethrowUnless(error, isAutoctxError, isSystemError);
      continue;
    }
    const reserved = (ledger?.fixture_reservations ?? []).find((f) => f.candidate_digest === p.candidate_digest);
    if (
      reserved &&
      reserved.evaluator_epoch === p.evaluator_epoch &&
      reserved.cohort === p.cohort &&
      JSON.stringify(reserved.units.map((u) => [u.lane, u.fixture_digest, u.seed])) === units
    )
      return ledger!.campaign_id;
  }
  return null;
}

/**
 * verify: each ledger lives under its own campaign's folder with a matching state digest; each artifact matches its
 * digest and its candidate.
 */
export function verifyCampaigns(c: Findings): void {
  const {store} = c;
  for (const entry of c.entries()) {
    if (entry.kind !== 'file') continue;
    const where = store.paths.campaignFileKind(entry.path);
    if (where?.kind === 'ledger') {
      c.attempt(entry.path, () =>
        readDocument(store.guard, entry.path, LEDGER_SCHEMA, (v) => {
          const l = v as unknown as {
            schema_version: number;
            campaign_id: string;
            state_digest: string;
            reservations: unknown;
            policy: unknown;
          };
          if (campaignSegment(l.campaign_id) !== where.folder)
            c.error(
              entry.path,
              'LINEAGE_MISMATCH',
              `${c.rel(entry.path)}: campaign "${l.campaign_id}" is stored under another folder`,
            );
          if (ledgerDigest(l) !== l.state_digest)
            c.error(entry.path, 'DIGEST_MISMATCH', `${c.rel(entry.path)}: state_digest does not match the ledger`);
          // A decided reservation (authorized or blocked) was stored with its immutable artifact.
          for (const r of (l.reservations ?? []) as Array<{candidate_digest?: unknown; status?: unknown}>) {
            if (
              (r.status !== 'authorized' && r.status !== 'blocked') ||
              typeof r.candidate_digest !== 'string' ||
              !/^[0-9a-f]{64}$/.test(r.candidate_digest)
            )
              continue;
            const artifact = store.paths.reservationArtifact(l.campaign_id, r.candidate_digest);
            if (!exists(artifact))
              c.both(
                entry.path,
                artifact,
                'MISSING_ARTIFACT',
                `${c.rel(entry.path)}: the ${r.status} reservation of ${r.candidate_digest} has no ${c.rel(artifact)}`,
              );
          }
          return v;
        }),
      );
    } else if (where?.kind === 'artifact') {
      c.attempt(entry.path, () =>
        readDocument(store.guard, entry.path, ARTIFACT_SCHEMA, (v) => {
          const a = v as unknown as {
            artifact_digest: string;
            campaign_id: string;
            risk_reservation: {candidate_digest: string};
            fixture_reservation: {candidate_digest: string};
          };
          if (reservationArtifactDigest(a) !== a.artifact_digest)
            c.error(entry.path, 'DIGEST_MISMATCH', `${c.rel(entry.path)}: artifact_digest does not match the artifact`);
          if (a.risk_reservation.candidate_digest !== where.candidate)
            c.error(entry.path, 'LINEAGE_MISMATCH', `${c.rel(entry.path)}: reserves another candidate`);
          return v;
        }),
      );
    }
  }
}

/** verify: a candidate whose plan binds a campaign has that campaign's ledger. */
export function verifyCampaignOfPlan(c: Findings, digest: string, campaignId: string | null): void {
  if (campaignId === null) return;
  const ledger = c.store.paths.campaignLedger(campaignId);
  if (!exists(ledger))
    c.both(
      c.store.paths.evaluatorPlan(digest),
      ledger,
      'MISSING_CAMPAIGN',
      `${c.rel(c.store.paths.evaluatorPlan(digest))} binds campaign "${campaignId}", but ${c.rel(ledger)} is missing`,
    );
}

export const campaignOfPlanCheck: CandidateCheck = {
  order: 800,
  candidate(c, digest, facts) {
    if (facts.plan) verifyCampaignOfPlan(c, digest, facts.plan.additions.campaign_id ?? null);
  },
};

export const campaignsCheck: ScenarioCheck = {
  order: 600,
  scenario(c) {
    verifyCampaigns(c);
  },
};
