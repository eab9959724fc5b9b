import {listChangeSeqs} from '../../store/kinds/signing/signing-records.js';
import {scenarioFindings, type Findings} from '../../store/scenario-findings.js';
import {readBytes} from '../../store/files/fs.js';
import {listStateChanges} from '../../store/kinds/signing/state-chain.js';
import {stateChainProblems} from './verify-state-chain.js';
import {anchorPins} from '../../model/signing/anchor-pins.js';
import type {ScenarioStore} from '../../store/index.js';
import {loadTrust, mustBeSigned, signatureProblem, type Trust, type TrustProblem} from './trust.js';
import type {ScenarioCheck} from '../../store/kinds/common/kind-steps.js';
import {signedRecords, type SignedRecord} from './signed-records.js';

export {signedRecords, type SignedRecord} from './signed-records.js';

/** The problems of the scenario's signatures: its trust, then each record that must be (or is) signed. */
export function signatureProblems(
  store: ScenarioStore,
  trust: Trust,
  records: readonly SignedRecord[] = signedRecords(store),
): TrustProblem[] {
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
  const chain = stateChainProblems(
    store,
    trust,
    records,
    anchor === null ? null : (anchorPins(anchor).get(store.scenario) ?? null),
  );
  for (const p of chain.findings) {
    if (p.code === 'CHAIN_PENDING') c.warn(p.file, p.code, p.message);
    else c.error(p.file, p.code, p.message);
  }
  c.chainHead = chain.head;
  if (trust.pending) c.warn(store.paths.allowedSigners, 'SIGNING_PENDING', trust.pending);
  if (trust.anchorBehind) c.warn(store.paths.allowedSigners, 'ANCHOR_BEHIND', trust.anchorBehind);
  // Every signature, and the signing history, counts as a file verify checked.
  for (const f of [
    store.paths.allowedSigners,
    `${store.paths.signingStart}.sig`,
    ...records.map((r) => `${r.file}.sig`),
    ...listChangeSeqs(store).flatMap((n) => [store.paths.signersChange(n), `${store.paths.signersChange(n)}.sig`]),
    ...listStateChanges(store).flatMap((e) => [e.file, `${e.file}.sig`]),
  ])
    c.attempt(f, () => readBytes(store.guard, f));
  if (trust.start && anchor === null)
    c.note(
      store.paths.allowedSigners,
      'SELF_ANCHORED',
      `${c.rel(store.paths.allowedSigners)}: the signatures were checked against the tree's own ` +
        `allowed_signers; anyone who can write the tree can replace its keys. Give the anchor kept outside ` +
        `the repository: --allowed-signers FILE or $AUTOCTX_ALLOWED_SIGNERS`,
    );
}

export const signaturesCheck: ScenarioCheck = {
  order: 1100,
  scenario(c) {
    verifySignatures(scenarioFindings(c), c.anchor);
  },
};
