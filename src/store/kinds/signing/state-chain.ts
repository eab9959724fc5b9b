import fs from 'node:fs';
import path from 'node:path';
import {parseJson, sha256Hex} from '../../../canonical/index.js';
import {fail, isAutoctxError, isJsonParseError, isSystemError, rethrowUnless} from '../../../errors.js';
import {isoTimestamp} from '../../../model/promotion/records.js';
import {serialize} from '../../documents.js';
import {readBytes} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * The signed state chain of a signed scenario (autoctx addition):
 * `context_bundles/signing/chain/<sha256>.json`, one entry per step that
 * changed the state under the scenario lock, named by the SHA-256 of its
 * bytes, signed (`<file>.sig`, kind `state-change`). Each entry names the
 * entry before it by digest (the first: `signing/start.json`) and the digest
 * of every file of `context_bundles/` the step wrote (null: removed). The
 * first entry is a snapshot of the state signing began with. Because entries
 * are named by content and point back, two histories can fork and be told
 * apart; verify walks the chain from its head (ARCHITECTURE §10.3).
 */
export const STATE_CHANGE_SCHEMA = 'state-change' as const;

export interface StateWrite {
  /** Relative to the scenario folder, with `/`: `context_bundles/…`. */
  file: string;
  sha256: string | null;
}

export interface StateChange {
  schema_version: 1;
  scenario: string;
  previous_sha256: string;
  actor: string;
  at: string;
  snapshot: boolean;
  writes: StateWrite[];
}

export interface StoredChange {
  digest: string;
  file: string;
  change: StateChange;
}

/**
 * Files the chain never names: what derives from other files or names itself (signatures, the chain), and temporaries.
 */
export function chainTracked(ctx: KindContext, file: string): boolean {
  const rel = path.relative(ctx.paths.contextDir, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
  const parts = rel.split(path.sep);
  if (
    parts[0] === 'bundles' ||
    parts[0] === 'runtime' ||
    parts[0] === '.lock' ||
    rel.startsWith(`signing${path.sep}chain${path.sep}`)
  )
    return false;
  const name = parts.at(-1)!;
  return !name.endsWith('.sig') && !name.endsWith('.tmp') && !name.endsWith('.lock');
}

export function chainName(ctx: KindContext, file: string): string {
  return path.relative(ctx.paths.dir, file).split(path.sep).join('/');
}

function digestOf(ctx: KindContext, file: string): string | null {
  const bytes = readBytes(ctx.guard, file);
  return bytes ? sha256Hex(bytes) : null;
}

/** Every entry stored (unreadable ones left to the verifier, which names them). */
export function listStateChanges(ctx: KindContext): Array<{digest: string; file: string}> {
  let names: string[];
  try {
    names = fs.readdirSync(ctx.paths.stateChainDir);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return [];
  }
  return names
    .filter((n) => /^[0-9a-f]{64}\.json$/.test(n))
    .sort()
    .map((n) => ({digest: n.slice(0, 64), file: path.join(ctx.paths.stateChainDir, n)}));
}

/** One entry, checked: its name is the digest of its bytes, and it names this scenario. */
export function readStateChange(ctx: KindContext, digest: string, schemaChecked = true): StoredChange {
  const file = ctx.paths.stateChange(digest);
  const bytes = readBytes(ctx.guard, file);
  if (!bytes) fail('INTEGRITY', `${ctx.guard.relative(file)} is missing`, {file: ctx.guard.relative(file)});
  if (sha256Hex(bytes) !== digest)
    fail('DIGEST_MISMATCH', `${ctx.guard.relative(file)} is not named by the SHA-256 of its bytes (it was edited)`, {
      file: ctx.guard.relative(file),
    });
  let value: StateChange;
  try {
    value = parseJson(bytes.toString('utf8')) as unknown as StateChange; // a key named twice is refused too
    // A reader of what serves only needs the links and the writes (the bytes are the name's): verify checks the schema.
    if (schemaChecked) serialize(STATE_CHANGE_SCHEMA, value, ctx.guard.relative(file));
    else if (
      typeof value?.previous_sha256 !== 'string' ||
      !Array.isArray(value.writes) ||
      !value.writes.every((w) => typeof w?.file === 'string' && (w.sha256 === null || typeof w.sha256 === 'string'))
    )
      throw new Error('not a state change');
  } catch (error) {
    rethrowUnless(error, isJsonParseError, isAutoctxError);
    fail('CORRUPT_FILE', `${ctx.guard.relative(file)} is not a state change: ${(error as Error).message}`, {
      file: ctx.guard.relative(file),
    });
  }
  if (value.scenario !== ctx.scenario)
    fail('DIGEST_MISMATCH', `${ctx.guard.relative(file)} names scenario ${JSON.stringify(value.scenario)}`, {
      file: ctx.guard.relative(file),
    });
  return {digest, file, change: value};
}

/**
 * The chain read for a writer: its head (null: no chain yet) and each file's digest as the newest change that wrote it
 * left it. A fork or a gap is refused.
 */
export function chainState(
  ctx: KindContext,
  schemaChecked = true,
): {head: string | null; latest: Map<string, string | null>} {
  const all = listStateChanges(ctx).map((e) => readStateChange(ctx, e.digest, schemaChecked));
  const latest = new Map<string, string | null>();
  if (all.length === 0) return {head: null, latest};
  const where = ctx.guard.relative(ctx.paths.stateChainDir);
  const byPrevious = new Map<string, StoredChange>();
  for (const e of all) {
    if (byPrevious.has(e.change.previous_sha256))
      fail(
        'INTEGRITY',
        `the signed state chain of scenario "${ctx.scenario}" forked (two changes follow ` +
          `${e.change.previous_sha256.slice(0, 12)}); run autoctx verify`,
        {file: where},
      );
    byPrevious.set(e.change.previous_sha256, e);
  }
  const start = readBytes(ctx.guard, ctx.paths.signingStart);
  let at = start ? byPrevious.get(sha256Hex(start)) : undefined;
  let head: string | null = null;
  let count = 0;
  for (; at; at = byPrevious.get(at.digest)) {
    head = at.digest;
    count++;
    for (const w of at.change.writes) latest.set(w.file, w.sha256);
  }
  if (count !== all.length)
    fail(
      'INTEGRITY',
      `the signed state chain of scenario "${ctx.scenario}" does not run in one line from ` +
        `signing/start.json (${all.length - count} of its changes are not reached): a change was deleted; ` +
        `run autoctx verify`,
      {file: where},
    );
  return {head, latest};
}

/** The newest entry (null: no chain yet). */
export function chainHead(ctx: KindContext): string | null {
  return chainState(ctx).head;
}

/** The records that carry a signature now (a `.sig` beside them), where signed records live. */
export function signedFilesNow(ctx: KindContext): string[] {
  const out: string[] = [];
  const scan = (dir: string) => {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return;
    }
    const set = new Set(names);
    for (const n of names) if (n.endsWith('.json') && set.has(`${n}.sig`)) out.push(path.join(dir, n));
  };
  const p = ctx.paths;
  for (const dir of [
    p.promotionsDir,
    p.rolloversDir,
    p.rollbacksDir,
    path.join(p.rollbacksDir, 'approvals'),
    p.signersChangesDir,
  ])
    scan(dir);
  for (const scope of safeList(path.join(p.releasesDir, 'receipts'))) scan(path.join(p.releasesDir, 'receipts', scope));
  for (const digest of safeList(p.candidatesDir)) {
    const seal = path.join(p.candidatesDir, digest, 'evidence_seal.json');
    if (fs.existsSync(`${seal}.sig`) && fs.existsSync(seal)) out.push(seal);
  }
  return out;
}

/** Every .json file under a folder, however deep (none: the folder is missing). */
export function filesUnder(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, {withFileTypes: true});
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return [];
  }
  return entries.flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(file);
    return e.isFile() && e.name.endsWith('.json') ? [file] : [];
  });
}

function safeList(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch (error) {
    rethrowUnless(error, isSystemError);
    return [];
  }
}

/** Every tracked file of context_bundles/ now, by name (the snapshot a chain begins with). */
export function stateSnapshot(ctx: KindContext): StateWrite[] {
  const out: StateWrite[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, {withFileTypes: true});
    } catch (error) {
      rethrowUnless(error, isSystemError);
      return;
    }
    for (const e of entries) {
      const file = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (chainTracked(ctx, path.join(file, 'x'))) walk(file);
      } else if (e.isFile() && chainTracked(ctx, file))
        out.push({file: chainName(ctx, file), sha256: digestOf(ctx, file)});
    }
  };
  walk(ctx.paths.contextDir);
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/**
 * Under the lock, at the end of a step of a signing store: one signed entry
 * naming the files the step wrote (their digests now), chained to the head.
 * A chain that does not exist yet begins here with a snapshot of the whole
 * state. A step that wrote nothing the chain tracks writes no entry.
 */
export function appendStateChange(
  ctx: KindContext,
  actor: string,
  written: readonly string[],
  at: Date = new Date(),
): string | null {
  if (!ctx.signer) return null;
  const start = readBytes(ctx.guard, ctx.paths.signingStart);
  if (!start) return null; // signing has not started: nothing to chain to
  const {head, latest} = chainState(ctx);
  // What a step cut short before its entry left signed but unchained is named by the next signed step (their own
  // signatures vouch for them).
  // So is the pointer such a step wrote (a signing command refuses, before its step, a pointer no signed record vouches
  // for).
  const pending =
    head === null
      ? []
      : [...signedFilesNow(ctx), ctx.paths.active].filter((f) => {
          const chained = latest.get(chainName(ctx, f));
          const now = digestOf(ctx, f);
          return now !== null && chained !== now;
        });
  const files = [...new Set([...written, ...pending].filter((f) => chainTracked(ctx, f)))].sort();
  if (head !== null && files.length === 0) return null;
  const writes =
    head === null ? stateSnapshot(ctx) : files.map((f) => ({file: chainName(ctx, f), sha256: digestOf(ctx, f)}));
  const change: StateChange = {
    schema_version: 1,
    scenario: ctx.scenario,
    previous_sha256: head ?? sha256Hex(start),
    actor,
    at: isoTimestamp(at),
    snapshot: head === null,
    writes,
  };
  const text = serialize(STATE_CHANGE_SCHEMA, change, 'a state change') as string;
  const digest = sha256Hex(text);
  const file = ctx.paths.stateChange(digest);
  ctx.writer.replace(`${file}.sig`, ctx.signer('state-change', digest));
  ctx.writer.create(file, text, (existing) => sha256Hex(existing) === digest);
  return digest;
}
