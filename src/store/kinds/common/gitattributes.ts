import {sha256Hex} from '../../../canonical/index.js';
import {readBytes, type RootGuard} from '../../files/fs.js';
import type {LockedWriter} from '../../files/locked-writer.js';
import {RootPaths} from '../../paths.js';

/**
 * The root's .gitattributes, a root-level document: how git checks out and merges autoctx's files. One block, between
 * a begin and an end line, always the same bytes:
 *
 * - no end-of-line conversion (`-text`) for anything in the tree: digests, signatures and the state chain are over
 *   bytes, so a checkout with `core.autocrlf=true` would read as an edited tree;
 * - the mutable documents `-merge`, exactly the committed files autoctx rewrites in place
 *   (src/store/layout/rewritable-files.ts: pointers, records and the evidence a run grows, registries, curation,
 *   a campaign's ledger, runtime files, signers, mirrors, the team's config, and their signatures): a change on both
 *   branches is a conflict, never a line-by-line union that no clone wrote;
 * - every file written once (under context_bundles/, and the ledger copies) `-merge` too: the same name written
 *   twice with other bytes is a conflict;
 * - files derived from others (mirrors, runtime files, ledger copies, manifests, evidence, signatures, the signed
 *   chain) `linguist-generated`, so review tools fold them.
 *
 * Lines a person wrote outside the block are theirs. A tree made before this file existed lacks it: a warning that
 * `autoctx repair` clears (it writes the file, or appends the block to a person's own). A block an earlier autoctx
 * wrote (EARLIER_BLOCKS) is outdated: a warning too, and repair writes the current one in its place. A block that is
 * there but not autoctx's bytes was edited: an error, and repair writes the block back (the lines outside it stay).
 * Lines after the block override it, so the block must end the file (only blank or comment lines may follow).
 */
export const GITATTRIBUTES_BEGIN = '# autoctx: begin (written by autoctx init and repair; autoctx verify checks it)';
export const GITATTRIBUTES_END = '# autoctx: end';

export const GITATTRIBUTES_BLOCK: string = [
  GITATTRIBUTES_BEGIN,
  '# Byte-exact files: no end-of-line conversion on checkout or commit.',
  '* -text',
  '# Mutable documents: a change on both branches is a conflict (keep one side), never a union.',
  '*/context_bundles/active.json -merge',
  '*/context_bundles/record_histories.json -merge',
  '*/context_bundles/candidates/*/record.json -merge',
  '*/context_bundles/candidates/*/record.json.sig -merge',
  '*/context_bundles/candidates/*/evaluator_plan.json -merge',
  '*/context_bundles/candidates/*/evaluator_plan.json.sig -merge',
  '*/context_bundles/candidates/*/evidence_seal.json -merge',
  '*/context_bundles/candidates/*/evidence_seal.json.sig -merge',
  '*/context_bundles/candidates/*/matched_trials.json -merge',
  '*/context_bundles/candidates/*/matched_trials.json.sig -merge',
  '*/context_bundles/bootstrap/curation.json -merge',
  '*/context_bundles/bootstrap/curation.json.sig -merge',
  '*/context_bundles/releases/registry/*.json -merge',
  '*/context_bundles/releases/registry/*.json.sig -merge',
  '*/context_bundles/promotion-risk/*/false-promotion.json -merge',
  '*/context_bundles/runtime/** -merge',
  '*/context_bundles/signing/chain/*.json.sig -merge',
  '*/allowed_signers -merge',
  '*/playbook.md -merge',
  '*/hints.md -merge',
  'autoctx.config.json -merge',
  '# Files written once (history entries, records, approvals, signatures, ledger copies): the same name written',
  '# twice with other bytes is a conflict too.',
  '*/context_bundles/** -merge',
  '*/negative_result_ledgers/** -merge',
  '# Derived files, folded by review tools.',
  '*/playbook.md linguist-generated',
  '*/hints.md linguist-generated',
  '*/negative_result_ledgers/** linguist-generated',
  '*/context_bundles/runtime/** linguist-generated',
  '*/context_bundles/bundles/*.json linguist-generated',
  '*/context_bundles/candidates/*/matched_trials.json linguist-generated',
  '*/context_bundles/candidates/*/evaluator_plan.json linguist-generated',
  '*/context_bundles/signing/chain/** linguist-generated',
  '*.sig linguist-generated',
  GITATTRIBUTES_END,
  '',
].join('\n');

/**
 * The SHA-256 of each block an earlier autoctx wrote, from its begin line to its end line's line break: the first one,
 * whose mutable documents were not yet the files autoctx rewrites (no signatures, no runtime files).
 */
const EARLIER_BLOCKS: ReadonlySet<string> = new Set([
  '6383036253df0165d74932e6b66235de5a8b3b3be2b463808f4a03bdfc24c5d7',
]);

export interface GitattributesState {
  file: string;
  /** Whether the file exists (with or without the block). */
  present: boolean;
  /**
   * ok: the block, at the end; absent: no file, or a file without any autoctx line; outdated: an earlier autoctx's
   * block, at the end; edited: the rest.
   */
  state: 'ok' | 'absent' | 'outdated' | 'edited';
  /** For 'edited': what is wrong, in words. */
  why?: string;
}

/** Where autoctx's block is in `text`: [start, end) of its lines, or null when it is not there whole. */
function blockAt(text: string): [number, number] | null {
  const start = beginAt(text);
  if (start < 0) return null;
  return text.startsWith(GITATTRIBUTES_BLOCK, start) ? [start, start + GITATTRIBUTES_BLOCK.length] : null;
}

/** Where the begin line starts a line of `text`, or -1. */
function beginAt(text: string): number {
  const after = text.indexOf(`\n${GITATTRIBUTES_BEGIN}\n`);
  return text.startsWith(`${GITATTRIBUTES_BEGIN}\n`) ? 0 : after < 0 ? -1 : after + 1;
}

/** Where an earlier autoctx's block is in `text`, whole: [start, end), or null. */
function earlierBlockAt(text: string): [number, number] | null {
  const start = beginAt(text);
  const end = start < 0 ? -1 : text.indexOf(`\n${GITATTRIBUTES_END}\n`, start);
  if (end < 0) return null;
  const at: [number, number] = [start, end + GITATTRIBUTES_END.length + 2];
  return EARLIER_BLOCKS.has(sha256Hex(text.slice(...at))) ? at : null;
}

/** A line autoctx's block holds as its marker: any line that starts with "# autoctx". */
const claimsBlock = (text: string): boolean => /(^|\n)# autoctx/.test(text);

/** Only blank lines and comments. */
const inert = (text: string): boolean =>
  text.split('\n').every((l) => l.trim() === '' || l.trimStart().startsWith('#'));

/** What the root's .gitattributes holds of autoctx's block. */
export function readGitattributes(guard: RootGuard): GitattributesState {
  const file = new RootPaths(guard.root).gitattributes;
  const text = readBytes(guard, file)?.toString('utf8');
  if (text === undefined || !claimsBlock(text)) return {file, present: text !== undefined, state: 'absent'};
  const current = blockAt(text);
  const at = current ?? earlierBlockAt(text);
  if (at === null) return {file, present: true, state: 'edited', why: "autoctx's block was changed"};
  if (!inert(text.slice(at[1])))
    return {file, present: true, state: 'edited', why: "rules after autoctx's block override it (put them before it)"};
  return {file, present: true, state: current ? 'ok' : 'outdated'};
}

/**
 * Write autoctx's block: the whole file when there is none, appended to a person's own file that lacks it, or in
 * place of an edited block (the lines outside it kept; rules after it are moved before it). Under the state area's
 * lock, which guards root-level documents. Returns what it did, or null when the block was in place.
 */
export function updateGitattributes(writer: LockedWriter): 'written' | 'appended' | 'restored' | null {
  const state = readGitattributes(writer.guard);
  if (state.state === 'ok') return null;
  const text = readBytes(writer.guard, state.file)?.toString('utf8');
  if (text === undefined) {
    writer.replace(state.file, GITATTRIBUTES_BLOCK, {mode: 0o644});
    return 'written';
  }
  const lines = text.split('\n');
  if (state.state === 'absent') {
    const prefix = text === '' || text.endsWith('\n') ? text : `${text}\n`;
    writer.replace(state.file, `${prefix}${GITATTRIBUTES_BLOCK}`, {mode: 0o644});
    return 'appended';
  }
  // Edited or outdated: keep the person's lines. Dropped: everything from the first line claiming to be autoctx's
  // marker to the last one, and any line of the block standing elsewhere.
  const own = new Set(GITATTRIBUTES_BLOCK.split('\n').filter((l) => l !== ''));
  const marker = (l: string) => l.startsWith('# autoctx');
  const first = lines.findIndex(marker);
  const last = lines.findLastIndex(marker);
  const kept = lines.filter((l, i) => (i < first || i > last) && !own.has(l));
  while (kept.length > 0 && kept.at(-1) === '') kept.pop();
  writer.replace(state.file, `${kept.length > 0 ? `${kept.join('\n')}\n` : ''}${GITATTRIBUTES_BLOCK}`, {mode: 0o644});
  return 'restored';
}
