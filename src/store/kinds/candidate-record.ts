import {fail} from '../../errors.js';
import type {CandidateRecord} from '../../model/records.js';
import {readDocument} from '../documents.js';
import {listDir} from '../fs.js';
import type {KindContext} from './context.js';
import {checkPolicy, type Findings} from '../findings.js';

/** candidates/<digest>/record.json: a candidate's lifecycle and decision (schema 2, or a readable schema 1). */
export const RECORD_SCHEMAS = ['record-v2', 'record-v1'] as const;
const HEX64 = /^[0-9a-f]{64}$/;

export function readRecord(ctx: KindContext, digest: string): CandidateRecord | null {
  return readDocument<CandidateRecord>(ctx.guard, ctx.paths.record(digest), [...RECORD_SCHEMAS], (value) => {
    const r = value as unknown as CandidateRecord;
    if (r.bundle_digest !== digest) fail('DIGEST_MISMATCH', `record names bundle ${r.bundle_digest} but lives under ${digest}`);
    return r;
  });
}

/**
 * Replace a record. Its directory is not fsynced: a record lost in a crash is
 * rebuilt from the evidence, which is durable before the record is written.
 */
export function writeRecord(ctx: KindContext, record: CandidateRecord): void {
  ctx.writer.replaceDocument(ctx.paths.record(record.bundle_digest), record.schema_version === 1 ? 'record-v1' : 'record-v2', record, {lazyDirectory: true});
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
  if (record === null) c.warn(recordFile, 'MISSING_RECORD', `${c.rel(recordFile)} is missing (an interrupted propose; running it again completes it)`);
  const bundle = c.bundle(digest);
  if (!store.hasBundle(digest)) c.error(recordFile, 'MISSING_BUNDLE', `candidate ${digest} has no manifest in bundles/`);
  if (record && bundle) {
    if (record.parent_digest !== bundle.parent_digest) c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: parent_digest differs from the manifest's`);
    if (record.evaluator_epoch !== bundle.evaluator_epoch) c.error(recordFile, 'LINEAGE_MISMATCH', `${c.rel(recordFile)}: evaluator_epoch differs from the manifest's`);
  }
  if (record) checkPolicy(c, recordFile, record.confirmation_policy, record.confirmation_policy_digest);
  return record;
}
