/**
 * The way out of a tree two clones' merged histories left (verify's DIVERGED), in every message that names one:
 * keep one side and make the other side's state changes again on it, through the gates.
 */
export const DIVERGED_WAY_OUT =
  "two clones' histories were merged; keep one side's knowledge/ (git checkout <that side's commit> -- " +
  "knowledge/) and make the other side's promotions, rollbacks, rejections and transitions again on it, where " +
  'the gates decide again (docs/guarantees.md, "Merges of two clones")';

/** The way out of a file a merge left git's conflict markers in. */
export const CONFLICT_WAY_OUT =
  "finish the merge by keeping one side's file (git checkout --ours or --theirs -- <file>), never by editing " +
  "autoctx's files by hand, then run autoctx verify";
