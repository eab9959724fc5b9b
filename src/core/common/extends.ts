import {blobIds, resolveRevision, revisionFiles} from '../../store/io/git.js';
import type {VerifyIssue} from '../../store/findings.js';
import {isRewritable} from '../../store/layout/rewritable-files.js';
import type {KnowledgeStore} from '../../store/knowledge.js';

/**
 * `verify --extends REV`: the tree extends REV's history. Every file of the
 * knowledge root at REV that autoctx writes once (a bundle, a promotion, a
 * rollback, a receipt, a history entry, a signed state change; see
 * store/layout/rewritable-files.ts) is still in the working tree with the same
 * bytes: at its path, or, when that path is gone, at another (a history entry
 * `autoctx upgrade` renamed). Git's history is the freshness anchor that
 * signatures lack: a pull request that deletes or rewrites an entry the base
 * branch recorded is refused, naming the file.
 */
export function checkExtends(knowledge: KnowledgeStore, rev: string): VerifyIssue[] {
  const root = knowledge.root;
  const commit = resolveRevision(root, rev);
  const before = revisionFiles(root, commit).filter((f) => !isRewritable(f.rel));
  if (before.length === 0) return [];
  const here = knowledge.files().filter((rel) => !isRewritable(rel));
  const ids = blobIds(root, here);
  const byPath = new Map(here.map((rel, i) => [rel, ids[i]!]));
  const anywhere = new Set(ids);
  const short = commit.slice(0, 12);
  const issues: VerifyIssue[] = [];
  for (const f of before) {
    const now = byPath.get(f.rel);
    if (now === f.blob) continue;
    if (now === undefined && anywhere.has(f.blob)) continue;
    issues.push({
      severity: 'error',
      code: 'HISTORY_REWRITTEN',
      file: f.rel,
      message:
        now === undefined
          ? `${f.rel} is on ${rev} (${short}) and was deleted here: autoctx never removes it, so this tree ` +
            `does not extend ${rev}'s history (in the knowledge root: git checkout ${short} -- ${f.rel})`
          : `${f.rel} differs from ${rev} (${short}): autoctx writes it once and never changes it, so this ` +
            `tree does not extend ${rev}'s history (in the knowledge root: git checkout ${short} -- ${f.rel})`,
    });
  }
  return issues;
}
