/**
 * Which files of a knowledge tree autoctx rewrites or removes in place (the
 * mutable documents: pointers, records, registries, heads, the scenario's
 * mirrors and their signatures), by their path relative to the knowledge
 * root. Every other file is written once and never changed or removed: a
 * bundle, a promotion, a rollback, a receipt, a history entry, a signed state
 * change. `verify --extends REV` holds those to git: each one that REV holds
 * must still be here with the same bytes (or, renamed by `autoctx upgrade`,
 * somewhere else in the tree). Unknown files count as written once: a kind
 * that starts rewriting a file it did not before must be named here, or the
 * check refuses its changes.
 */
const REWRITTEN: readonly RegExp[] = [
  // The root's own files, and the state area (never committed).
  /^\.gitignore$/,
  /^\.gitattributes$/,
  /^autoctx\.config\.json$/,
  /^\.state\//,
  // A scenario's anchor and mirrors.
  /^[^/]+\/allowed_signers$/,
  /^[^/]+\/(playbook|hints)\.md$/,
  // The serving pointer and the history adoption (rewritten by repair).
  /^[^/]+\/context_bundles\/active\.json$/,
  /^[^/]+\/context_bundles\/record_histories\.json$/,
  // A candidate's record and the evidence a run grows.
  /^[^/]+\/context_bundles\/candidates\/[^/]+\/(record|evaluator_plan|evidence_seal|matched_trials)\.json(\.sig)?$/,
  // Heads: curation (which holds the handoffs' heads), release registries, a campaign's ledger, the evaluator harness.
  /^[^/]+\/context_bundles\/bootstrap\/curation\.json(\.sig)?$/,
  /^[^/]+\/context_bundles\/releases\/registry\/[^/]+\.json(\.sig)?$/,
  /^[^/]+\/context_bundles\/promotion-risk\/[^/]+\/false-promotion\.json$/,
  /^[^/]+\/context_bundles\/runtime\//,
  // A signed state change's signature (re-signed by repair; the change itself is content-addressed).
  /^[^/]+\/context_bundles\/signing\/chain\/[^/]+\.json\.sig$/,
  // A lock, or a writer's temporary file, that a crash left behind (repair removes them).
  /(^|\/)[^/]*\.lock(\/|$)/,
  /\.tmp$/,
];

/** True when autoctx may rewrite or remove the file at `rel` (relative to the knowledge root, `/`-separated). */
export function isRewritable(rel: string): boolean {
  return REWRITTEN.some((r) => r.test(rel));
}
