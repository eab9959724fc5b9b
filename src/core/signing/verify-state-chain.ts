import {sha256Hex} from '../../canonical/index.js';
import {isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import type {Findings} from '../../store/scenario-findings.js';
import {exists, readBytes} from '../../store/files/fs.js';
import type {ScenarioStore} from '../../store/index.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';
import {moveFile, pointerHistory} from '../../store/kinds/promotion/pointer-moves.js';
import {
  chainName,
  listStateChanges,
  readStateChange,
  type StoredChange,
} from '../../store/kinds/signing/state-chain.js';
import type {SignedKind} from '../../store/kinds/signing/signatures.js';
import {signatureProblem, type Trust, type TrustProblem} from './trust.js';
import type {SignedRecord} from './signed-records.js';

/**
 * The signed state chain walked (ARCHITECTURE §10.3): from the start record
 * through each change that names the one before it, to the one head. What it
 * proves: every change on it was signed by a principal allowed then; nothing
 * a change wrote was removed without a later signed change; no change in the
 * middle was deleted (the next names it); the pointer was not moved in
 * another implementation's form after the chain last wrote it. What it
 * cannot prove alone: that the newest changes were not deleted together with
 * everything they wrote (a truncation to an earlier signed state) — the
 * anchor and git must pin that.
 */
export interface ChainFinding {
  file: string;
  code:
    | 'STATE_CHAIN_BROKEN'
    | 'MISSING_STATE_CHAIN'
    | 'SIGNED_FILE_MISSING'
    | 'UNSIGNED_POINTER_MOVE'
    | 'CHAIN_PENDING'
    | 'CHAIN_BEHIND_ANCHOR'
    | TrustProblem['code'];
  message: string;
}

export interface ChainWalk {
  /** The entries from the first to the head (empty: no chain). */
  entries: StoredChange[];
  /** Each file's digest as the newest change that wrote it left it (null: removed), with that change. */
  latest: Map<string, {sha256: string | null; change: StoredChange}>;
  problems: ChainFinding[];
}

function short(d: string): string {
  return d.slice(0, 12);
}

/**
 * Read and link the chain: one first entry (naming the start record), each entry named by exactly one after it but the
 * head.
 */
export function walkStateChain(store: ScenarioStore): ChainWalk {
  const problems: ChainFinding[] = [];
  const rel = (f: string) => store.guard.relative(f);
  const startBytes = readBytes(store.guard, store.paths.signingStart);
  const walk: ChainWalk = {entries: [], latest: new Map(), problems};
  if (!startBytes) return walk;
  const all: StoredChange[] = [];
  for (const {digest, file} of listStateChanges(store)) {
    try {
      all.push(readStateChange(store, digest));
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
      problems.push({file, code: 'STATE_CHAIN_BROKEN', message: error.message});
    }
  }
  if (all.length === 0) return walk;
  const byDigest = new Map(all.map((e) => [e.digest, e]));
  const children = new Map<string, StoredChange[]>();
  for (const e of all) children.set(e.change.previous_sha256, [...(children.get(e.change.previous_sha256) ?? []), e]);
  const root = sha256Hex(startBytes);
  for (const e of all) {
    if (e.change.previous_sha256 !== root && !byDigest.has(e.change.previous_sha256))
      problems.push({
        file: e.file,
        code: 'STATE_CHAIN_BROKEN',
        message:
          `${rel(e.file)} names the change before it, ` +
          `${rel(store.paths.stateChange(e.change.previous_sha256))}, which is not there: a signed change ` +
          `was deleted from the middle of the chain`,
      });
  }
  for (const [previous, next] of children) {
    if (next.length > 1)
      problems.push({
        file: next[0]!.file,
        code: 'STATE_CHAIN_BROKEN',
        message:
          `${next.map((e) => rel(e.file)).join(' and ')} both follow ` +
          `${previous === root ? rel(store.paths.signingStart) : `${short(previous)}…`}: the chain forked ` +
          `(two histories of this scenario, not merged)`,
      });
  }
  const first = children.get(root) ?? [];
  if (first.length === 0)
    problems.push({
      file: store.paths.stateChainDir,
      code: 'STATE_CHAIN_BROKEN',
      message:
        `no change of ${rel(store.paths.stateChainDir)} follows ${rel(store.paths.signingStart)}: the chain ` +
        `does not begin where signing started (its first change was deleted, or signing/start.json replaced)`,
    });
  // The walk, while it is one line.
  let at: StoredChange | undefined = first.length === 1 ? first[0] : undefined;
  const seen = new Set<string>();
  while (at && !seen.has(at.digest)) {
    seen.add(at.digest);
    walk.entries.push(at);
    for (const w of at.change.writes) walk.latest.set(w.file, {sha256: w.sha256, change: at});
    const next: StoredChange[] = children.get(at.digest) ?? [];
    at = next.length === 1 ? next[0] : undefined;
  }
  if (walk.entries.length > 0 && !walk.entries[0]!.change.snapshot)
    problems.push({
      file: walk.entries[0]!.file,
      code: 'STATE_CHAIN_BROKEN',
      message:
        `${rel(walk.entries[0]!.file)} is the chain's first change but not a snapshot of the state signing ` +
        `began with`,
    });
  return walk;
}

/**
 * In a signed tree active.json is the pointer the newest signed change
 * wrote. The one exception is a step cut short before its chain entry: the
 * pointer a signed move record wrote (a promotion, a rollback execution, a
 * rollover) that the chain does not name yet, whose own signature vouches for
 * it. Anything else is a move without a signature: by hand, in another
 * implementation's rollover or rollback form, or an older pointer put back.
 * The problem, or null.
 */
export function unsignedPointerMove(
  store: ScenarioStore,
  latest: ChainWalk['latest'] | Map<string, string | null>,
  strict: false | ((record: string, kind: SignedKind) => boolean) = false,
): string | null {
  const bytes = readBytes(store.guard, store.paths.active);
  if (!bytes || latest.size === 0) return null;
  const entry = latest.get(chainName(store, store.paths.active));
  const chained = entry === undefined ? undefined : typeof entry === 'object' && entry !== null ? entry.sha256 : entry;
  if (chained === sha256Hex(bytes)) return null;
  // A reader of what serves (strict) serves no pointer the chain does not name unless a signed move vouches for it.
  const unvouched =
    `${store.guard.relative(store.paths.active)} is not the pointer the newest signed change wrote ` +
    `(SHA-256 ${chained ?? 'none'}), and no signed move record vouches for it: in a signed tree every ` +
    `pointer move is signed. Put back the active.json the newest signed change names (from git) and move ` +
    `the pointer with autoctx promote, autoctx rollback or autoctx epoch rollover, with --signing-key`;
  let head;
  try {
    const history = pointerHistory(store, requireActive(store));
    if (history.problems.length > 0) return strict ? unvouched : null; // the pointer history's own errors name it
    head = history.chain.at(-1);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return strict ? unvouched : null; // an unreadable pointer is reported by its own check
  }
  if (!head) return strict ? unvouched : null;
  const record = head.foreign
    ? null
    : head.kind === 'promotion' || head.kind === 'rollover' || (head.kind === 'rollback' && head.id.startsWith('RBX-'))
      ? moveFile(store, head)
      : null;
  // A reader of what serves (strict) also checks that signature: a .sig beside a record written by hand vouches for
  // nothing.
  const kind: SignedKind =
    head.kind === 'promotion' ? 'promotion' : head.kind === 'rollover' ? 'rollover' : 'rollback-execution';
  if (
    record !== null &&
    readBytes(store.guard, `${record}.sig`) !== null &&
    (strict === false || strict(record, kind))
  ) {
    const recordBytes = readBytes(store.guard, record);
    const named = latest.get(chainName(store, record));
    const namedDigest =
      named === undefined ? undefined : typeof named === 'object' && named !== null ? named.sha256 : named;
    // a signed move the chain has not named yet: a step cut short
    if (recordBytes !== null && namedDigest !== sha256Hex(recordBytes)) return null;
  }
  const form = head.foreign
    ? `in another implementation's ${head.kind} form, which no signed change records`
    : `to the pointer of ${head.kind} ${head.id}, but the newest signed change that wrote active.json ` +
      `wrote another (SHA-256 ${chained ?? 'none'}): an older pointer was put back, or the pointer moved ` +
      `without a signed change`;
  return (
    `${store.guard.relative(store.paths.active)} serves ${head.to} ${form}: in a signed tree every ` +
    `pointer move is signed. Put back the active.json the newest signed change ` +
    `names${chained ? ` (SHA-256 ${chained})` : ''} (from git) and move the pointer with autoctx ` +
    `promote, autoctx rollback or autoctx epoch rollover, with --signing-key`
  );
}

/** The chain's findings against a signed tree's trust and its signed records. */
export function stateChainProblems(
  store: ScenarioStore,
  trust: Trust,
  records: readonly SignedRecord[],
  pinned: string | null = null,
): {findings: ChainFinding[]; head: string | null} {
  if (!trust.start) return {findings: [], head: null};
  const rel = (f: string) => store.guard.relative(f);
  const walk = walkStateChain(store);
  const out: ChainFinding[] = [...walk.problems];
  const signedSince = records.filter((r) => readBytes(store.guard, `${r.file}.sig`) !== null);
  if (walk.entries.length === 0 && out.length === 0) {
    // A signing start cut short before its chain began has signed nothing else yet: the start run again begins it.
    if (signedSince.length === 0 && listStateChanges(store).length === 0)
      out.push({
        file: store.paths.stateChainDir,
        code: 'CHAIN_PENDING',
        message:
          `${rel(store.paths.stateChainDir)} is missing: a signing start cut short before its chain began ` +
          `(autoctx signing start, run again, begins it)`,
      });
    else
      out.push({
        file: store.paths.stateChainDir,
        code: 'MISSING_STATE_CHAIN',
        message:
          `${rel(store.paths.stateChainDir)} is missing, but the tree holds signed records: the signed state ` +
          `chain was deleted (or the tree was signed by an autoctx before the chain; a signed command begins ` +
          `it)`,
      });
    return {findings: out, head: null};
  }
  for (const e of walk.entries) {
    const problem = signatureProblem(store, trust.entries, e.file, 'state-change', e.change.at, e.change.actor);
    if (problem) out.push(problem);
  }
  const dir = store.paths.dir;
  for (const [file, {sha256, change}] of walk.latest) {
    if (sha256 !== null && !exists(`${dir}/${file}`))
      out.push({
        file: `${dir}/${file}`,
        code: 'SIGNED_FILE_MISSING',
        message:
          `${file} was written by the signed change ${rel(change.file)} (${change.change.actor}, ` +
          `${change.change.at}) and is gone: removed without a signed change`,
      });
  }
  for (const r of signedSince) {
    const chained = walk.latest.get(chainName(store, r.file));
    const bytes = readBytes(store.guard, r.file);
    if (!chained || (bytes !== null && chained.sha256 !== sha256Hex(bytes)))
      out.push({
        file: r.file,
        code: 'CHAIN_PENDING',
        message:
          `${rel(r.file)} is signed, but no change of the signed state chain names it as it is: a command ` +
          `cut short before its chain entry (the next signed command names it), or the chain's newest ` +
          `changes were deleted`,
      });
  }
  // The anchor's pin: a change the chain must still reach (a truncation past it is seen).
  if (pinned !== null && !walk.entries.some((e) => e.digest === pinned))
    out.push({
      file: store.paths.stateChainDir,
      code: 'CHAIN_BEHIND_ANCHOR',
      message:
        `the anchor pins change ${pinned} of scenario "${store.scenario}", which its signed state chain ` +
        `(head ${walk.entries.at(-1)?.digest ?? 'none'}) does not reach: its newest changes were deleted ` +
        `(cut back to an earlier signed state), or the tree is not the one the anchor was pinned from`,
    });
  const moved = unsignedPointerMove(store, walk.latest);
  if (moved) out.push({file: store.paths.active, code: 'UNSIGNED_POINTER_MOVE', message: moved});
  return {findings: out, head: walk.entries.at(-1)?.digest ?? null};
}
