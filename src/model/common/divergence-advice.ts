/**
 * The way out of a tree two clones' merged histories left (verify's DIVERGED), in every message that names one:
 * reconcile keeps one side and makes the other side's state changes again on it, through the gates.
 */
export const DIVERGED_WAY_OUT =
  "two clones' histories were merged; run autoctx reconcile, which keeps one side's knowledge/ and makes the " +
  "other side's promotions, rollbacks, rejections and transitions again on it, where the gates decide again " +
  '(docs/guarantees.md, "Merges of two clones")';

/** The way out of a file a merge left git's conflict markers in. */
export const CONFLICT_WAY_OUT =
  "finish the merge with autoctx reconcile (it keeps one side and makes the other side's changes again on it), " +
  "never by editing autoctx's files by hand; or keep one side's file (git checkout --ours or --theirs -- <file>) " +
  'and run autoctx verify';
