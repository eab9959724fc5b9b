import {listChangeSeqs} from '../../store/kinds/signing/signing-records.js';
import type {Findings} from '../../store/findings.js';
import {readBytes} from '../../store/files/fs.js';
import {listReleaseScopes, readReceipts, signedReceipt} from '../../store/kinds/release/release-receipt.js';
import {listApprovalKeys, listExecutionKeys, readApproval, readExecution} from '../../store/kinds/rollback/rollback-execution.js';
import type {SignedKind} from '../../store/kinds/signing/signatures.js';
import {listStateChanges} from '../../store/kinds/signing/state-chain.js';
import {stateChainProblems} from './verify-state-chain.js';
import {anchorPins} from '../../model/signing/anchor-pins.js';
import type {ScenarioStore} from '../../store/index.js';
import {loadTrust, mustBeSigned, signatureProblem, type Trust, type TrustProblem} from './trust.js';
import {isAutoctxError, isSystemError, isJsonParseError, rethrowUnless} from '../../errors.js';

/** One record that carries a signature: its file, kind, signed time and the principal it names. */
export interface SignedRecord {
  file: string;
  kind: SignedKind;
  at: string | null;
  principal: string | null;
  role: 'sign' | 'approve';
}

function quiet<T>(fn: () => T): T | null {
  try {
    return fn();
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError, isJsonParseError);
    return null; // the record's own checks report a file that does not read back
  }
}

/** Every record of the scenario that a signed tree signs. */
export function signedRecords(store: ScenarioStore): SignedRecord[] {
  const out: SignedRecord[] = [];
  for (const id of store.listPromotionIds()) {
    const p = quiet(() => store.readPromotion(id));
    if (p) out.push({file: store.paths.promotion(id), kind: 'promotion', at: p.promoted_at, principal: null, role: 'sign'});
  }
  for (const digest of store.listCandidateDigests()) {
    const file = store.paths.evidenceSeal(digest);
    const bytes = readBytes(store.guard, file);
    if (!bytes) continue;
    const seal = quiet(() => JSON.parse(bytes.toString('utf8')) as {sealed_at?: string});
    out.push({file, kind: 'trial-seal', at: seal?.sealed_at ?? null, principal: null, role: 'sign'});
  }
  for (const id of store.listRolloverIds()) {
    const r = quiet(() => store.readRollover(id));
    if (r) out.push({file: store.paths.rollover(id), kind: 'rollover', at: r.rolled_over_at, principal: null, role: 'sign'});
  }
  for (const key of listExecutionKeys(store)) {
    const r = quiet(() => readExecution(store, key));
    if (r) out.push({file: store.paths.rollbackExecution(key), kind: 'rollback-execution', at: r.executed_at, principal: r.actor, role: 'sign'});
  }
  for (const key of listApprovalKeys(store)) {
    const a = quiet(() => readApproval(store, key));
    if (a) out.push({file: store.paths.rollbackApproval(key), kind: 'rollback-approval', at: a.approved_at, principal: a.approved_by, role: 'approve'});
  }
  for (const scope of listReleaseScopes(store)) {
    for (const r of quiet(() => readReceipts(store, scope)) ?? []) {
      if (signedReceipt(r)) out.push({file: store.paths.releaseReceipt(scope, r.seq), kind: 'release-receipt', at: r.at, principal: r.actor, role: 'sign'});
    }
  }
  return out;
}

/** The problems of the scenario's signatures: its trust, then each record that must be (or is) signed. */
export function signatureProblems(store: ScenarioStore, trust: Trust, records: readonly SignedRecord[] = signedRecords(store)): TrustProblem[] {
  const problems = [...trust.problems];
  if (!trust.start && !trust.anchored) return problems;
  for (const r of records) {
    const hasSig = readBytes(store.guard, `${r.file}.sig`) !== null;
    if (!hasSig && !mustBeSigned(store, trust, r.file)) continue;
    const problem = signatureProblem(store, trust.entries, r.file, r.kind, r.at, r.principal, r.role);
    if (problem) problems.push(problem);
  }
  return problems;
}

/**
 * verify: the signatures of a signed tree, against the anchor when one is
 * given (and the tree's history proves its file descends from it), else
 * against the tree's own file, which verify says is self-anchored.
 */
export function verifySignatures(c: Findings, anchor: string | null): void {
  const {store} = c;
  // Counted as checked only when the signing history exists (attempt counts what it reads).
  let trust: Trust | undefined;
  c.attempt(store.paths.signingStart, () => {
    trust = loadTrust(store, anchor);
    return trust.start ? trust : null;
  });
  if (!trust) return;
  const records = signedRecords(store);
  for (const p of signatureProblems(store, trust, records)) c.error(p.file, p.code, p.message);
  const chain = stateChainProblems(store, trust, records, anchor === null ? null : (anchorPins(anchor).get(store.scenario) ?? null));
  for (const p of chain.findings) {
    if (p.code === 'CHAIN_PENDING') c.warn(p.file, p.code, p.message);
    else c.error(p.file, p.code, p.message);
  }
  c.chainHead = chain.head;
  if (trust.pending) c.warn(store.paths.allowedSigners, 'SIGNING_PENDING', trust.pending);
  if (trust.anchorBehind) c.warn(store.paths.allowedSigners, 'ANCHOR_BEHIND', trust.anchorBehind);
  // Every signature, and the signing history, counts as a file verify checked.
  for (const f of [store.paths.allowedSigners, `${store.paths.signingStart}.sig`, ...records.map((r) => `${r.file}.sig`), ...listChangeSeqs(store).flatMap((n) => [store.paths.signersChange(n), `${store.paths.signersChange(n)}.sig`]), ...listStateChanges(store).flatMap((e) => [e.file, `${e.file}.sig`])]) c.attempt(f, () => readBytes(store.guard, f));
  if (trust.start && anchor === null) c.note(store.paths.allowedSigners, 'SELF_ANCHORED', `${c.rel(store.paths.allowedSigners)}: the signatures were checked against the tree's own allowed_signers; anyone who can write the tree can replace its keys. Give the anchor kept outside the repository: --allowed-signers FILE or $AUTOCTX_ALLOWED_SIGNERS`);
}
