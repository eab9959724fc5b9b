import {isAutoctxError, isSystemError, rethrowUnless} from '../../../errors.js';
import type {Curation, CurationCause} from '../../../model/delivery/curation.js';
import {versionKey, type CanarySettings, type ShadowSettings} from '../../../model/release/release.js';
import type {ScenarioStore} from '../../../store/index.js';
import {curationEntryFile, curationShape} from '../../../store/kinds/delivery/curation.js';
import {readHandoffAt, revisionFile} from '../../../store/kinds/delivery/handoff.js';
import {
  listReceiptNames,
  listReleaseScopes,
  readReceipts,
  receiptFile,
} from '../../../store/kinds/release/release-receipt.js';

/** A release transition (or a runnable-set change) the other side recorded by a receipt. */
export interface TransitionEvent {
  kind: 'transition';
  at: string;
  scope: string;
  action: 'transition' | 'runnable';
  version: string | null;
  /** The bundle the version named on the other side. */
  bundle: string | null;
  to: string | null;
  rationale: string;
  actor: string;
  applied: boolean;
  canary: CanarySettings | null;
  shadow: ShadowSettings | null;
  runnable: {versions: string[] | null; default_version: string | null} | null;
  files: string[];
}

/** A change of the curation: a tag, a reference or a grant added or removed. */
export interface CurationEvent {
  kind: 'curation';
  at: string;
  cause: Exclude<CurationCause, 'handoff-write' | 'repair'>;
  /** The component digest (tags) or scenario name (references, grants). */
  subject: string;
  files: string[];
}

/** A handoff revision: its content becomes the next revision on the kept side. */
export interface HandoffEvent {
  kind: 'handoff';
  at: string;
  id: string;
  content: {[key: string]: unknown};
  files: string[];
}

/** A read of the other side's tree; what does not read there is `empty` (the catch-all step accounts for it). */
export function quiet<T>(fn: () => T, empty: T): T {
  try {
    return fn();
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return empty;
  }
}

/** A file's path relative to its scenario's folder, `/`-separated. */
export const inScenario = (store: ScenarioStore, file: string) =>
  store.guard.relative(file).split('/').slice(1).join('/');

/** The receipts the other side wrote since the base, oldest first (rollback receipts belong to their rollback). */
export function transitionEvents(base: ScenarioStore | null, other: ScenarioStore): TransitionEvent[] {
  const out: TransitionEvent[] = [];
  for (const scope of quiet(() => listReleaseScopes(other), [])) {
    const had = new Set(base ? quiet(() => listReceiptNames(base, scope), []) : []);
    for (const r of quiet(() => readReceipts(other, scope), [])) {
      const file = receiptFile(other, r);
      const name = file.split(/[\\/]/).pop()!;
      if (had.has(name) || r.action === 'rollback') continue;
      const rel = r.version !== null ? r.registry?.releases[versionKey(r.version)] : undefined;
      out.push({
        kind: 'transition',
        at: r.at,
        scope,
        action: r.action,
        version: r.version,
        bundle: r.bundle_digest,
        to: r.requested_state,
        rationale: r.rationale,
        actor: r.actor,
        applied: r.applied,
        canary: rel?.canary ?? null,
        shadow: rel?.shadow ?? null,
        runnable: r.action === 'runnable' ? (r.registry?.runnable ?? null) : null,
        files: [inScenario(other, file)],
      });
    }
  }
  return out;
}

function added<T>(before: readonly T[], after: readonly T[], key: (x: T) => string): T[] {
  const had = new Set(before.map(key));
  return after.filter((x) => !had.has(key(x)));
}

/** What one curation change did, from the curation before it and after it. */
function curationChange(before: Curation | null, after: Curation, cause: CurationCause): string[] {
  const tag = (t: {component_digest: string}) => t.component_digest;
  const name = (s: string) => s;
  switch (cause) {
    case 'tag-add':
      return added(before?.tags ?? [], after.tags, tag).map(tag);
    case 'tag-rm':
      return added(after.tags, before?.tags ?? [], tag).map(tag);
    case 'reference-add':
      return added(before?.references ?? [], after.references, name);
    case 'reference-rm':
      return added(after.references, before?.references ?? [], name);
    case 'grant-add':
      return added(before?.grants ?? [], after.grants, name);
    case 'grant-rm':
      return added(after.grants, before?.grants ?? [], name);
    default:
      return [];
  }
}

/** The curation changes and handoff revisions the other side made since the base, oldest first. */
export function deliveryEvents(base: ScenarioStore | null, other: ScenarioStore): Array<CurationEvent | HandoffEvent> {
  const had = new Set(base ? quiet(() => curationShape(base).line.map((e) => e.digest), []) : []);
  const line = quiet(() => curationShape(other).line, []);
  const out: Array<CurationEvent | HandoffEvent> = [];
  line.forEach((e, i) => {
    if (had.has(e.digest)) return;
    const entry = e.value;
    const before = i > 0 ? line[i - 1]!.value.curation : null;
    const files = [inScenario(other, curationEntryFile(other, entry))];
    if (entry.cause === 'handoff-write') {
      for (const head of entry.curation.handoffs) {
        const old = before?.handoffs.find((h) => h.id === head.id);
        if (old && old.document_digest === head.document_digest) continue;
        const doc = quiet(() => readHandoffAt(other, head.id, head.document_digest, head.revision), null);
        if (doc)
          out.push({
            kind: 'handoff',
            at: entry.written_at,
            id: head.id,
            content: doc.content,
            files: [...files, inScenario(other, revisionFile(other, doc))],
          });
      }
      return;
    }
    if (entry.cause === 'repair') return;
    for (const subject of curationChange(before, entry.curation, entry.cause))
      out.push({kind: 'curation', at: entry.written_at, cause: entry.cause, subject, files});
  });
  return out;
}
