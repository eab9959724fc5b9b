import {isAutoctxError} from '../../errors.js';
import {isSafeSegment} from '../../store/index.js';
import {readBytes} from '../../store/files/fs.js';
import type {SeqNamed} from '../../store/kinds/common/entry-chain.js';
import type {RepairRun, ScenarioRepair} from '../../store/kinds/common/kind-steps.js';
import {seqNamedCuration} from '../../store/kinds/delivery/curation.js';
import {listHandoffIds, seqNamedRevisions} from '../../store/kinds/delivery/handoff.js';
import {listCandidateDigests} from '../../store/kinds/promotion/candidate-record.js';
import {seqNamedHistory} from '../../store/kinds/promotion/record-history.js';
import {listReleaseScopes, seqNamedReceipts} from '../../store/kinds/release/release-receipt.js';

/**
 * Rename one entry to the name of its digest, losing nothing: its bytes and
 * its signature (a signature signs bytes, never a name) are written under the
 * new name first, then the old name is removed. A crash in between leaves the
 * entry under both names (readers take it once) or a signature whose entry
 * moved on (ORPHAN_SIGNATURE); running repair again completes it.
 */
function rename(run: RepairRun, r: SeqNamed): void {
  const {guard, writer} = run.store;
  const bytes = readBytes(guard, r.from);
  if (bytes === null) return;
  const sig = readBytes(guard, `${r.from}.sig`);
  if (sig) writer.create(`${r.to}.sig`, sig, (existing) => existing.equals(sig));
  writer.create(r.to, bytes, (existing) => existing.equals(bytes));
  writer.remove(r.from);
  if (sig) writer.remove(`${r.from}.sig`);
}

/**
 * repair: the entries of append-only histories that earlier versions named by
 * position (`<seq>.json`) are renamed to the SHA-256 of their content, the
 * name the entry after them knows them by. First in line, so that every
 * later step reads a tree named one way. An entry that does not read back is
 * left as it is (verify names it).
 */
export const historyNamesRepair: ScenarioRepair = {
  order: 150,
  repair(run) {
    const {store, rel, actions, remaining} = run;
    const folders: Array<[string, () => SeqNamed[]]> = [
      ...listCandidateDigests(store).map((d): [string, () => SeqNamed[]] => [
        store.paths.recordHistoryDir(d),
        () => seqNamedHistory(store, d),
      ]),
      ...listReleaseScopes(store).map((s): [string, () => SeqNamed[]] => [
        store.paths.releaseReceiptDir(s),
        () => seqNamedReceipts(store, s),
      ]),
      [store.paths.curationHistoryDir, () => seqNamedCuration(store)],
      ...listHandoffIds(store)
        .filter(isSafeSegment)
        .map((id): [string, () => SeqNamed[]] => [store.paths.handoffDir(id), () => seqNamedRevisions(store, id)]),
    ];
    for (const [dir, list] of folders) {
      let renames: SeqNamed[];
      try {
        renames = list();
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        remaining.push(`${rel(dir)}: ${error.message}; its entries keep the names of their positions`);
        continue;
      }
      for (const r of renames) rename(run, r);
      if (renames.length > 0)
        actions.push(
          `renamed ${renames.length} ${renames.length === 1 ? 'entry' : 'entries'} ` +
            `of ${rel(dir)} from their positions to their digests`,
        );
    }
  },
};
