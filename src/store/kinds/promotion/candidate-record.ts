import path from 'node:path';
import {fail} from '../../../errors.js';
import type {CandidateRecord} from '../../../model/promotion/records.js';
import {readDocument} from '../../documents.js';
import {listDir} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import {checkPolicy, type Findings} from '../../findings.js';
import {interruptedBaseline} from './history.js';
import {recordChange} from './record-history.js';
import type {RecordCause} from '../../../model/promotion/record-history.js';
import {readActive} from './active-pointer.js';
import {hasBundle} from '../bundle/bundle.js';
import type {CandidateCheck, ScenarioCheck} from '../common/kind-steps.js';

/** candidates/<digest>/record.json: a candidate's lifecycle and decision (schema 2, or a readable schema 1). */
export const RECORD_SCHEMAS = ['record-v2', 'record-v1'] as const;
const HEX64 = /^[0-9a-f]{64}$/;

export function readRecord(ctx: KindContext, digest: string): CandidateRecord | null {
  return readDocument<CandidateRecord>(ctx.guard, ctx.paths.record(digest), [...RECORD_SCHEMAS], (value) => {
    const r = value as unknown as CandidateRecord;
    if (r.bundle_digest !== digest)
      fail('DIGEST_MISMATCH', `record names bundle ${r.bundle_digest} but lives under ${digest}`);
    return r;
  });
}

/**
 * Replace a record, after the entry of its history that records the change
 * (record_history/). Its directory is not fsynced: a record lost in a crash
 * is rebuilt from its history entry or from the evidence, both durable
 * before the record is written.
 */
export function writeRecord(ctx: KindContext, record: CandidateRecord, cause: RecordCause): CandidateRecord {
  const current = readRecord(ctx, record.bundle_digest);
  const written = recordChange(ctx, record, current, cause);
  putRecord(ctx, written);
  return written;
}

/** Write record.json as it is: the change is in its history already (repair completing a change cut short). */
export function putRecord(ctx: KindContext, record: CandidateRecord): void {
  ctx.writer.replaceDocument(
    ctx.paths.record(record.bundle_digest),
    record.schema_version === 1 ? 'record-v1' : 'record-v2',
    record,
    {lazyDirectory: true},
  );
}

export function listCandidateDigests(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.candidatesDir)
    .filter((e) => e.isDirectory() && HEX64.test(e.name))
    .map((e) => e.name);
}

/** verify: the record names its own bundle and agrees with its manifest's lineage; its policy matches its digest. */
export function verifyRecord(c: Findings, digest: string): CandidateRecord | null | undefined {
  const {store} = c;
  const recordFile = store.paths.record(digest);
  const record = c.attempt(recordFile, () => readRecord(store, digest));
  const bundle = c.bundle(digest);
  if (record === null) {
    // propose writes the diff, then the manifest, then the record: only those may be there without it.
    const evaluated = [
      'evaluatorPlan',
      'matchedTrials',
      'evidenceSeal',
      'negativeResult',
      'causalAttribution',
      'staleTerminalization',
    ] as const;
    const present = evaluated.map((k) => store.paths[k](digest)).filter((f) => store.guard.present(f));
    if (present.length > 0)
      c.error(
        recordFile,
        'MISSING_CANDIDATE',
        `${c.rel(recordFile)} is missing, but the candidate was evaluated ` +
          `(${present.map((f) => path.basename(f)).join(', ')}): the record of its decision was deleted`,
      );
    else if (
      bundle?.parent_digest === null &&
      !interruptedBaseline(store, digest, c.attempt(store.paths.active, () => readActive(store)) ?? null)
    )
      c.error(
        recordFile,
        'MISSING_CANDIDATE',
        `${c.rel(recordFile)} is missing: the record of a baseline that init or a rollover made active was deleted`,
      );
    else
      c.warn(
        recordFile,
        'MISSING_RECORD',
        `${c.rel(recordFile)} is missing (an interrupted propose; running it again completes it)`,
      );
  }
  if (!hasBundle(store, digest) && record !== null)
    c.error(
      recordFile,
      'MISSING_BUNDLE',
      `candidate ${digest} has no manifest: ${c.rel(store.paths.bundle(digest))} is missing`,
    );
  if (record && bundle) {
    if (record.parent_digest !== bundle.parent_digest)
      c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: parent_digest differs from the manifest's`);
    if (record.evaluator_epoch !== bundle.evaluator_epoch)
      c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: evaluator_epoch differs from the manifest's`);
  }
  if (record) checkPolicy(c, recordFile, record.confirmation_policy, record.confirmation_policy_digest);
  return record;
}

/**
 * What verify found of the files a record may depend on: null absent, undefined refused (reported by its own check).
 */
export interface CandidateFiles {
  /**
   * Written before autoctx kept histories here (predatesHistories): the Python implementation's first store wrote no
   * plan and no diff.
   */
  predating: boolean;
  diff: unknown;
  plan: {upstream: boolean} | null | undefined;
  evidence: {legacy: boolean; trials: number} | null | undefined;
  seal: unknown;
}

/**
 * verify: a decided record (one with a comparison: screened, confirmed,
 * rejected by evaluation, promoted) has every file it was decided from: its
 * plan, its evidence, its trial seal and its diff. Runs write the evidence,
 * then the seal, then the record, so a decided record without its seal is
 * never a crash state; only a candidate whose plan has exactly the Python
 * implementation's shape (which writes no seal) is accepted without one, and
 * it is said to be checked by replay alone.
 */
export function verifyDecidedFiles(c: Findings, digest: string, record: CandidateRecord, files: CandidateFiles): void {
  const {store} = c;
  const recordFile = store.paths.record(digest);
  const rel = c.rel(recordFile);
  const sealFile = store.paths.evidenceSeal(digest);
  if (record.parent_digest !== null && files.diff === null && !files.predating)
    c.both(
      recordFile,
      store.paths.manifestDiff(digest),
      'MISSING_DIFF',
      `${rel} is a proposed candidate, but ${c.rel(store.paths.manifestDiff(digest))} is missing`,
    );
  const hasTrials =
    files.evidence !== null && files.evidence !== undefined && !files.evidence.legacy && files.evidence.trials > 0;
  if (record.comparison === null) {
    if (hasTrials && files.seal === null)
      c.warn(
        sealFile,
        'UNSEALED_TRIALS',
        `${c.rel(store.paths.matchedTrials(digest))}: trials recorded before ${c.rel(sealFile)} was first ` +
          `written (an interrupted run; running it again or autoctx repair seals them)`,
      );
    return;
  }
  const decided = `${rel} holds a decision ("${record.comparison.decision}")`;
  if (files.plan === null && !files.predating)
    c.both(
      recordFile,
      store.paths.evaluatorPlan(digest),
      'MISSING_PLAN',
      `${decided}, but ${c.rel(store.paths.evaluatorPlan(digest))}, the plan it was decided under, is missing`,
    );
  if (files.evidence === null)
    c.both(
      recordFile,
      store.paths.matchedTrials(digest),
      'MISSING_EVIDENCE',
      `${decided}, but ${c.rel(store.paths.matchedTrials(digest))}, the evidence it was decided from, is missing`,
    );
  if (files.seal !== null || files.evidence === null || files.evidence === undefined) return;
  if (files.evidence.legacy || files.plan?.upstream || (files.plan === null && files.predating)) {
    c.note(
      recordFile,
      'REPLAY_ONLY',
      `${rel}: written by another implementation, which seals no trials; its evidence is checked by replay alone`,
    );
  } else if (files.plan !== undefined) {
    c.both(
      recordFile,
      sealFile,
      'MISSING_SEAL',
      `${decided}, but ${c.rel(sealFile)}, the seal of the trials it was decided from, is missing (runs ` +
        `write it before the record)`,
    );
  }
}

/** The lifecycles a record may have beside its comparison (the decision it was last given). */
function allowedLifecycles(record: CandidateRecord): readonly string[] {
  const decision = record.comparison?.decision ?? null;
  // Any candidate may be rejected by hand, as stale, or by a campaign gate.
  if (decision === null) return record.parent_digest === null ? ['active', 'superseded'] : ['proposed', 'rejected'];
  if (decision === 'needs_screen') return ['proposed', 'rejected'];
  if (decision === 'rejected') return ['rejected'];
  if (decision === 'confirmed') return ['confirmed', 'active', 'superseded', 'rejected'];
  return ['screened', 'rejected']; // needs_confirmation, needs_heldout, inconclusive (its terminal records follow)
}

/**
 * verify: the lifecycle agrees with the record's own comparison (a rejected
 * comparison leaves the record rejected; only a confirmed one, or a
 * baseline, ever serves) and with the negative result beside it (which
 * means rejected: a record still live beside one is a rejection its command
 * did not finish, and one that serves is an error).
 */
export function verifyLifecycle(c: Findings, digest: string, record: CandidateRecord): void {
  const file = c.store.paths.record(digest);
  const allowed = allowedLifecycles(record);
  if (!allowed.includes(record.lifecycle)) {
    const why = record.comparison
      ? `its comparison decided "${record.comparison.decision}"`
      : record.parent_digest === null
        ? 'it is a baseline'
        : 'it has no comparison';
    c.error(
      file,
      'LIFECYCLE_MISMATCH',
      `${c.rel(file)} says "${record.lifecycle}", but ${why}: a lifecycle a run never writes (allowed: ` +
        `${allowed.join(', ')})`,
    );
  }
  const negative = c.store.paths.negativeResult(digest);
  if (record.lifecycle === 'rejected' || !c.store.guard.present(negative)) return;
  if (record.lifecycle === 'active' || record.lifecycle === 'superseded')
    c.both(
      file,
      negative,
      'LIFECYCLE_MISMATCH',
      `${c.rel(file)} says "${record.lifecycle}", but ${c.rel(negative)} says it was rejected`,
    );
  else
    c.warn(
      file,
      'TERMINAL_PENDING',
      `${c.rel(file)} says "${record.lifecycle}" beside ${c.rel(negative)}: a rejection interrupted before ` +
        `its record (running the same command again, or autoctx repair, completes it)`,
    );
}

declare module '../common/kind-steps.js' {
  interface CandidateFacts {
    /** The candidate's record.json (null: none; undefined: it could not be read). */
    record: CandidateRecord | null | undefined;
  }
}

/** verify: the record first; every other check of the candidate compares against it. */
export const recordCheck: CandidateCheck = {
  order: 100,
  candidate(c, digest, facts) {
    facts.record = verifyRecord(c, digest);
  },
};

/** verify: the files a decided record stands on, then its lifecycle against the pointer's history. */
export const decidedFilesCheck: CandidateCheck = {
  order: 900,
  candidate(c, digest, facts) {
    const {record, diff, plan, evidence, predating = false} = facts;
    if (record) verifyDecidedFiles(c, digest, record, {predating, diff, plan, evidence, seal: evidence?.seal});
  },
};

export const lifecycleCheck: CandidateCheck = {
  order: 1000,
  candidate(c, digest, facts) {
    if (facts.record) verifyLifecycle(c, digest, facts.record);
  },
};

/**
 * verify: a manifest with a parent always has its candidate folder (propose
 * writes the diff first); a parentless one is a baseline whose record init or
 * a rollover writes next (an interrupted one is reported by the pointer's check).
 */
export const unrecordedBundlesCheck: ScenarioCheck = {
  order: 100,
  scenario(c, view) {
    const known = new Set([...view.records.keys(), ...listCandidateDigests(c.store)]);
    const {store} = c;
    for (const [digest, outline] of c.bundles) {
      if (known.has(digest)) continue;
      if (
        outline.parent_digest === null &&
        interruptedBaseline(store, digest, c.attempt(store.paths.active, () => readActive(store)) ?? null)
      )
        continue;
      const file = store.paths.bundle(digest);
      c.error(
        file,
        'MISSING_CANDIDATE',
        `${c.rel(file)} has no ${c.rel(store.paths.candidateDir(digest))}/: its record, and any evaluation ` +
          `of it, were deleted`,
      );
    }
  },
};
