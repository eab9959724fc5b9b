import {fail, rethrowUnless} from '../../errors.js';

/**
 * git's and ssh-keygen's allowed_signers format (ssh-keygen(1), "ALLOWED
 * SIGNERS"): one key per line, `principals [options] keytype base64-key
 * [comment]`, with the options ssh-keygen accepts and no others
 * (`cert-authority`, `namespaces="…"`, `valid-after="…"`,
 * `valid-before="…"`), so that one file serves autoctx, git and
 * `ssh-keygen -Y verify` alike. The approver role is a namespace: a line
 * whose namespaces option lists `autoctx-approver` (beside `autoctx`) may
 * approve emergency rollbacks; a line without a namespaces option may sign
 * but not approve. Times are read as UTC (write the trailing Z, which
 * ssh-keygen reads the same way; without it ssh-keygen uses local time).
 * Pure.
 */
export const APPROVER_NAMESPACE = 'autoctx-approver';

export interface SignerEntry {
  line: number;
  principals: string;
  namespaces: string | null;
  validAfter: number | null;
  validBefore: number | null;
  certAuthority: boolean;
  keyType: string;
  /** The public key in SSH wire form. */
  key: Buffer;
}

const KEY_TYPES = new RegExp(
  '^(ssh-ed25519|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(256|384|521)|' +
    String.raw`sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)$`,
);

/** ssh-keygen's time forms: YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, with an optional Z; read here as UTC. */
function parseTime(text: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?Z?$/.exec(text);
  if (!m) return null;
  const t = Date.UTC(
    Number(m[1]),
    Number(m[2]) - 1,
    Number(m[3]),
    Number(m[4] ?? 0),
    Number(m[5] ?? 0),
    Number(m[6] ?? 0),
  );
  return Number.isFinite(t) ? t : null;
}

/** What splitOptions throws for an options field it cannot split. */
class OptionsSyntaxError extends Error {}

/** Split the options field on commas outside double quotes. */
function splitOptions(field: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of field) {
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (quoted) throw new OptionsSyntaxError('an unterminated quote in the options');
  out.push(cur);
  return out;
}

/** The next whitespace-separated field, where double quotes keep spaces inside (the options field may quote them). */
function fields(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    if (/\s/.test(ch) && !quoted) {
      if (cur !== '') out.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (cur !== '') out.push(cur);
  return out;
}

/** Parse an allowed_signers text; a malformed line is INVALID_INPUT naming it (exit 2), as ssh-keygen refuses it. */
export function parseAllowedSigners(text: string, what: string): SignerEntry[] {
  const entries: SignerEntry[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '').trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const bad = (why: string): never =>
      fail(
        'INVALID_INPUT',
        `${what}:${i + 1}: ${why} (allowed_signers lines are "principals [options] keytype base64-key [comment]")`,
        {file: what, line: i + 1},
      );
    const f = fields(raw);
    if (f.length < 3) bad('too few fields');
    let at = 1;
    const entry: SignerEntry = {
      line: i + 1,
      principals: f[0]!,
      namespaces: null,
      validAfter: null,
      validBefore: null,
      certAuthority: false,
      keyType: '',
      key: Buffer.alloc(0),
    };
    if (!KEY_TYPES.test(f[1]!)) {
      let options: string[] = [];
      try {
        options = splitOptions(f[1]!);
      } catch (error) {
        rethrowUnless(error, (e) => e instanceof OptionsSyntaxError);
        bad((error as Error).message);
      }
      for (const o of options) {
        const m = /^([a-z-]+)(?:="([^"]*)")?$/i.exec(o);
        if (!m) bad(`the option ${JSON.stringify(o)} is malformed`);
        const [, name, value] = m!;
        const lower = name!.toLowerCase();
        if (lower === 'cert-authority' && value === undefined) entry.certAuthority = true;
        else if (lower === 'namespaces' && value !== undefined) entry.namespaces = value;
        else if ((lower === 'valid-after' || lower === 'valid-before') && value !== undefined) {
          const t = parseTime(value);
          if (t === null) bad(`${lower} ${JSON.stringify(value)} is not YYYYMMDD[HHMM[SS]][Z]`);
          if (lower === 'valid-after') entry.validAfter = t;
          else entry.validBefore = t;
        } else bad(`ssh-keygen refuses the option ${JSON.stringify(o)}`);
      }
      at = 2;
    }
    if (f.length < at + 2) bad('the key is missing');
    if (!KEY_TYPES.test(f[at]!)) bad(`${JSON.stringify(f[at])} is not a key type`);
    const key = Buffer.from(f[at + 1]!, 'base64');
    if (key.length === 0 || key.toString('base64').replace(/=+$/, '') !== f[at + 1]!.replace(/=+$/, ''))
      bad('the key is not base64');
    entry.keyType = f[at]!;
    entry.key = key;
    entries.push(entry);
  }
  return entries;
}

/** OpenSSH's match_pattern_list: comma-separated patterns with * and ?, a leading ! negates; a negated match wins. */
export function matchPatternList(value: string, list: string): boolean {
  let matched = false;
  for (const raw of list.split(',')) {
    const negated = raw.startsWith('!');
    const pattern = negated ? raw.slice(1) : raw;
    const re = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*/g, '.*')
        .replace(/\?/g, '.')}$`,
      's',
    );
    if (re.test(value)) {
      if (negated) return false;
      matched = true;
    }
  }
  return matched;
}

/** Whether a line lets a key sign in `namespace` at time `at` (ms). */
export function entryAllows(e: SignerEntry, namespace: string, at: number): boolean {
  if (e.certAuthority) return false; // certificates are not used by autoctx
  if (e.namespaces !== null && !matchPatternList(namespace, e.namespaces)) return false;
  if (e.validAfter !== null && at < e.validAfter) return false;
  if (e.validBefore !== null && at > e.validBefore) return false;
  return true;
}

/** The lines of this key valid for `namespace` at `at`. */
export function entriesFor(entries: readonly SignerEntry[], key: Buffer, namespace: string, at: number): SignerEntry[] {
  return entries.filter((e) => e.key.equals(key) && entryAllows(e, namespace, at));
}

/** Whether one of these lines names the principal (a pattern list) and, for approvals, carries the approver role. */
export function principalAllowed(lines: readonly SignerEntry[], principal: string, role: 'sign' | 'approve'): boolean {
  return lines.some(
    (e) =>
      matchPatternList(principal, e.principals) &&
      (role === 'sign' || (e.namespaces !== null && matchPatternList(APPROVER_NAMESPACE, e.namespaces))),
  );
}
