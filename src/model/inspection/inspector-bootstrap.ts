import {sha256Hex} from '../../canonical/index.js';
import {isReceiptId} from '../delivery/bootstrap-receipt.js';
import {
  BEGIN_MARKER,
  BOOTSTRAP_LIMITS,
  Body,
  END_MARKER,
  itemBlock,
  packageHead,
  TRUNCATION_MARK,
  type PackageItem,
} from '../delivery/bootstrap-render.js';
import {bodyChunks} from '../delivery/bootstrap-text.js';
import type {ContextBundle} from '../bundle/bundle.js';
import type {EvidencePackage} from '../delivery/package-layout.js';
import type {Finding, InspectorLookup, ReceiptView} from './inspector-types.js';
import {isJsonParseError, rethrowUnless} from '../../errors.js';

/**
 * The bootstrap layout's check (autoctx-bootstrap-v1): every byte of the
 * delivery is accounted for. The inspector rebuilds, with the renderer's own
 * functions, the exact text autoctx writes (header, each cited item from its
 * source, the end marker) and compares all of it; text it did not write is a
 * finding wherever it stands. The items are compared with the receipt that
 * names them, so a dropped item is a finding too. The one variant accepted is
 * CRLF line endings throughout (a host's conversion). Pure.
 */
export interface BootstrapCheck {
  findings: Finding[];
  matched: number;
  /** The delivered bodies, unquoted: where an ABSENT text is looked for as the package quotes it. */
  bodies: string[];
}

/** A JSON string as the citation writes it, captured. */
const QUOTED = String.raw`("(?:[^"\\\n]|\\.)*")`;
const CITATION = new RegExp(
  String.raw`^## Item (\d+): (component|handoff)\n {4}scenario=${QUOTED} ` +
    String.raw`(?:kind=${QUOTED} key=${QUOTED}|handoff=${QUOTED} revision=(\d+))` +
    String.raw`\n {4}digest=([0-9a-f]*) truncated=(yes|no)\n\n`,
);

interface Block {
  /** The number its heading gives it. */
  n: number;
  item: PackageItem;
  text: string;
  /** The quoted body, "> " taken off each line; null when a line is not quoted. */
  body: string | null;
}

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

/** LF text: as written, or CRLF throughout undone; `mixed` when neither (a lone CR, or CRLF and LF together). */
function lineEndings(text: string): {text: string; mixed: boolean} {
  if (!text.includes('\r')) return {text, mixed: false};
  const lf = text.split('\r\n').join('\n');
  if (!lf.includes('\r') && lf.split('\n').join('\r\n') === text) return {text: lf, mixed: false};
  return {text: text.replace(/\r\n?/g, '\n'), mixed: true};
}

function unquote(quoted: string): string | null {
  const lines = quoted.split('\n');
  return lines.every((l) => l.startsWith('> ')) ? lines.map((l) => l.slice(2)).join('\n') : null;
}

function parseBlock(text: string): Block | null {
  const m = CITATION.exec(text);
  if (!m) return null;
  try {
    const str = (s: string | undefined) => (s === undefined ? null : (JSON.parse(s) as string));
    const n = Number(m[1]);
    const revision = m[7] !== undefined ? Number(m[7]) : null;
    if (!Number.isSafeInteger(n) || (revision !== null && !Number.isSafeInteger(revision))) return null;
    const handoff = m[2] === 'handoff';
    const item: PackageItem = {
      kind: handoff ? 'handoff' : 'component',
      scenario: str(m[3])!,
      component_kind: str(m[4]),
      component_key: str(m[5]),
      component_digest: handoff ? null : m[8]!,
      handoff_id: str(m[6]),
      revision,
      handoff_digest: handoff ? m[8]! : null,
      truncated: m[9] === 'yes',
    };
    return {n, item, text, body: unquote(text.slice(m[0].length))};
  } catch (error) {
    rethrowUnless(error, isJsonParseError);
    return null; // a citation string that is not JSON
  }
}

export function itemLabel(item: PackageItem): string {
  return item.kind === 'handoff'
    ? `handoff ${item.handoff_id}@${item.revision}`
    : `${item.component_kind}/${item.component_key}`;
}

/** How many of a source's chunks render to exactly `length` UTF-16 units; null when no chunk boundary falls there. */
function chunksIn(source: string, length: number): number | null {
  const text = bodyChunks(source).text;
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    if (at === length) return i;
    at += text[i]!.length;
  }
  return at === length ? text.length : null;
}

/**
 * What is wrong with a block against the source it cites (the renderer's text for it), or null when it is exactly that.
 */
function blockProblem(b: Block, source: string): string | null {
  const body = new Body(source);
  let p = body.length;
  const {truncated} = b.item;
  if (truncated) {
    const cut =
      b.body !== null && b.body.endsWith(TRUNCATION_MARK)
        ? chunksIn(source, b.body.length - TRUNCATION_MARK.length)
        : null;
    if (cut === null || cut >= body.length) return 'the truncated body is not a prefix of its source plus the mark';
    const bytes = body.bytesBefore(cut) + utf8(TRUNCATION_MARK);
    if (bytes < BOOTSTRAP_LIMITS.minShortenedBody || bytes > BOOTSTRAP_LIMITS.itemBodyBytes)
      return (
        `the truncated body is ${bytes} bytes: autoctx never cuts one below ` +
        `${BOOTSTRAP_LIMITS.minShortenedBody} or above ${BOOTSTRAP_LIMITS.itemBodyBytes}`
      );
    p = cut;
  } else if (body.bytesBefore(p) > BOOTSTRAP_LIMITS.itemBodyBytes)
    return `a whole body over ${BOOTSTRAP_LIMITS.itemBodyBytes} bytes, which autoctx always cuts`;
  const expected = itemBlock(b.n, b.item, body.quoted(p, truncated), truncated);
  if (expected === b.text) return null;
  if (b.text.startsWith(expected))
    return `${utf8(b.text.slice(expected.length))} bytes after its body that autoctx did not write`;
  return truncated
    ? 'the truncated body is not a prefix of its source plus the mark'
    : 'the body is not the source it cites';
}

/** One cited item against its source: matched (true), or a finding. */
function checkItem(b: Block, scenario: string, bundle: ContextBundle, lookup: InspectorLookup): Finding | true {
  const {item} = b;
  const subject = itemLabel(item);
  const finding = (code: Finding['code'], detail: string): Finding => ({code, check: 'cited_item', subject, detail});
  if (item.scenario !== scenario)
    return finding(
      'UNVERIFIABLE',
      `cited from scenario ${JSON.stringify(item.scenario)}, which this inspection does not read`,
    );
  if (item.kind === 'handoff') {
    const h = lookup.handoff(item.handoff_id ?? '', item.revision ?? 0);
    if (!h) return finding('UNVERIFIABLE', 'the scenario holds no such handoff revision');
    if (h.digest !== item.handoff_digest)
      return finding(
        'MISMATCH',
        `cites digest ${item.handoff_digest!.slice(0, 12)}, but that revision's is ${h.digest.slice(0, 12)}`,
      );
    const problem = blockProblem(b, h.body);
    return problem ? finding('MISMATCH', problem) : true;
  }
  const digest = item.component_digest!;
  const own = bundle.components.find((x) => x.digest === digest);
  const c = own ?? lookup.otherComponent(digest);
  if (!c) return finding('MISMATCH', `cites component ${digest.slice(0, 12)}, which no stored bundle holds`);
  if (c.state !== undefined) return finding('UNVERIFIABLE', `the component is ${c.state}: unverifiable by design`);
  if (c.kind !== item.component_kind || c.key !== item.component_key)
    return finding('MISMATCH', `the digest is that of ${c.kind}/${c.key}`);
  const problem = blockProblem(b, c.content);
  if (problem) return finding('MISMATCH', problem);
  return own
    ? true
    : finding(
        'UNVERIFIABLE',
        `drawn with another bundle's component ${digest.slice(0, 12)}, not one of ${bundle.digest.slice(0, 12)}`,
      );
}

const ITEM_FIELDS = [
  'kind',
  'scenario',
  'component_kind',
  'component_key',
  'component_digest',
  'handoff_id',
  'revision',
  'handoff_digest',
  'truncated',
] as const;

/** An item as a receipt records it: the citation's fields, and a recall's score (not part of the package's bytes). */
function isPackageItem(v: unknown): v is PackageItem {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  const nullableString = (x: unknown) => x === null || typeof x === 'string';
  const extra = Object.keys(o).filter((k) => !(ITEM_FIELDS as readonly string[]).includes(k));
  return (
    Object.keys(o).length - extra.length === ITEM_FIELDS.length &&
    extra.every((k) => k === 'score' && typeof o.score === 'number') &&
    (o.kind === 'component' || o.kind === 'handoff') &&
    typeof o.scenario === 'string' &&
    nullableString(o.component_kind) &&
    nullableString(o.component_key) &&
    nullableString(o.component_digest) &&
    nullableString(o.handoff_id) &&
    (o.revision === null || Number.isSafeInteger(o.revision)) &&
    nullableString(o.handoff_digest) &&
    typeof o.truncated === 'boolean'
  );
}

/** The receipt a package carries as metadata.receipt: null when none, 'malformed' when it is not one. */
function carriedReceipt(metadata: Record<string, unknown> | undefined): ReceiptView | null | 'malformed' {
  const r = metadata?.receipt;
  if (r === undefined) return null;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return 'malformed';
  const o = r as Record<string, unknown>;
  const digest = o.package_digest;
  if (
    !Array.isArray(o.items) ||
    !o.items.every(isPackageItem) ||
    !(digest === undefined || digest === null || (typeof digest === 'string' && /^[0-9a-f]{64}$/.test(digest)))
  )
    return 'malformed';
  return {items: o.items, ...(digest !== undefined ? {package_digest: digest as string | null} : {})};
}

const itemKey = (i: PackageItem) => JSON.stringify(ITEM_FIELDS.map((f) => i[f]));

/**
 * The delivered items against a receipt's: what it names that the package lacks (a dropped item), what it holds
 * unnamed, the order.
 */
function compareItems(delivered: PackageItem[], named: PackageItem[], what: string): Finding[] {
  const findings: Finding[] = [];
  const left = [...delivered.map(itemKey)];
  for (const item of named) {
    const at = left.indexOf(itemKey(item));
    if (at >= 0) left.splice(at, 1);
    else
      findings.push({
        code: 'MISMATCH',
        check: 'item_list',
        subject: itemLabel(item),
        detail: `${what} names it${item.truncated ? ' (truncated)' : ''}, but the package does not hold it`,
      });
  }
  const extra = [...named.map(itemKey)];
  for (const item of delivered) {
    const at = extra.indexOf(itemKey(item));
    if (at >= 0) extra.splice(at, 1);
    else
      findings.push({
        code: 'MISMATCH',
        check: 'item_list',
        subject: itemLabel(item),
        detail: `the package holds it${item.truncated ? ' (truncated)' : ''}, but ${what} does not name it`,
      });
  }
  if (findings.length === 0 && delivered.map(itemKey).join('\n') !== named.map(itemKey).join('\n'))
    findings.push({
      code: 'MISMATCH',
      check: 'item_list',
      subject: 'package',
      detail: `its items stand in another order than ${what} names them`,
    });
  return findings;
}

function receiptFindings(
  p: EvidencePackage['package'],
  text: string,
  delivered: PackageItem[],
  lookup: InspectorLookup,
): Finding[] {
  const findings: Finding[] = [];
  const receipts: Array<{what: string; r: ReceiptView}> = [];
  const carried = carriedReceipt(p.metadata);
  if (carried === 'malformed')
    findings.push({
      code: 'MISMATCH',
      check: 'item_list',
      subject: 'receipt',
      detail: 'metadata.receipt is not a delivery receipt (its items and package_digest as autoctx writes them)',
    });
  else if (carried) receipts.push({what: 'the receipt it carries', r: carried});
  const stored = isReceiptId(p.correlation_id) ? lookup.receipt(p.correlation_id) : null;
  if (stored) receipts.push({what: `stored receipt ${p.correlation_id}`, r: stored});
  if (receipts.length === 0 && carried !== 'malformed') {
    findings.push({
      code: 'UNVERIFIABLE',
      check: 'item_list',
      subject: 'package',
      detail:
        'no receipt names the items it should hold, so a dropped item would not show (seal it with its ' +
        'receipt as metadata.receipt, or its receipt id as the correlation id)',
    });
  }
  const digest = sha256Hex(text);
  for (const {what, r} of receipts) {
    if (r.scenario !== undefined && r.scenario !== p.scenario)
      findings.push({
        code: 'MISMATCH',
        check: 'item_list',
        subject: 'receipt',
        detail: `${what} is for scenario ${JSON.stringify(r.scenario)}`,
      });
    if (r.package_digest !== undefined && r.package_digest !== digest)
      findings.push({
        code: 'MISMATCH',
        check: 'item_list',
        subject: 'package',
        detail:
          `its text (${digest.slice(0, 12)}) is not the package ${what} names ` +
          `(${(r.package_digest ?? 'none').slice(0, 12)})`,
      });
    findings.push(...compareItems(delivered, r.items, what));
  }
  return findings;
}

export function inspectBootstrap(pkg: EvidencePackage, bundle: ContextBundle, lookup: InspectorLookup): BootstrapCheck {
  const p = pkg.package;
  const findings: Finding[] = [];
  const framing = (subject: string, detail: string) =>
    findings.push({code: 'MISMATCH', check: 'framing', subject, detail});
  if (p.system_prompt !== '')
    framing(
      'system_prompt',
      `${utf8(p.system_prompt)} bytes of system prompt: the bootstrap layout delivers none, so autoctx ` +
        `wrote none of them`,
    );
  const {text, mixed} = lineEndings(p.user_prompt);
  if (mixed) framing('package', 'its line endings are neither LF nor CRLF throughout: a CR that autoctx did not write');
  const begin = text.indexOf(`${BEGIN_MARKER}\n\n`);
  const end = text.lastIndexOf(`\n\n${END_MARKER}`);
  if (begin < 0 || end < begin + BEGIN_MARKER.length) {
    framing('package', 'the user prompt is not a bootstrap package: its begin or end marker is missing');
    return {findings, matched: 0, bodies: []};
  }
  const innerAt = begin + BEGIN_MARKER.length + 2;
  const head = text.slice(0, innerAt);
  if (head !== packageHead('bootstrap') && head !== packageHead('recall'))
    framing(
      'header',
      `the ${utf8(head)} bytes before the first item are not autoctx's header (title, trust policy, begin marker)`,
    );
  if (text.slice(end) !== `\n\n${END_MARKER}`)
    framing(
      'end',
      `${utf8(text.slice(end + 2 + END_MARKER.length))} bytes after the end marker that autoctx did not write`,
    );
  if (utf8(text) > BOOTSTRAP_LIMITS.maxBytes)
    framing('package', `${utf8(text)} bytes, over the ${BOOTSTRAP_LIMITS.maxBytes} autoctx ever renders`);
  const inner = text.slice(innerAt, end);
  const parts = inner === '' ? [] : inner.split(/\n\n(?=## Item \d+: )/);
  if (parts.length === 0) framing('package', 'it holds no item: autoctx never delivers an empty package');
  if (parts.length > BOOTSTRAP_LIMITS.maxItems)
    framing('package', `${parts.length} items, over the ${BOOTSTRAP_LIMITS.maxItems} autoctx ever renders`);
  let matched = 0;
  const bodies: string[] = [];
  const delivered: PackageItem[] = [];
  parts.forEach((part, i) => {
    const b = parseBlock(part);
    if (!b) {
      framing(
        `item ${i + 1}`,
        `its ${utf8(part)} bytes are not an item as autoctx writes one (heading, citation, quoted body)`,
      );
      bodies.push(part);
      return;
    }
    delivered.push(b.item);
    bodies.push(b.body ?? part);
    if (b.n !== i + 1)
      findings.push({
        code: 'MISMATCH',
        check: 'item_list',
        subject: itemLabel(b.item),
        detail: `numbered ${b.n}, it stands at position ${i + 1}: an item was dropped, added or moved`,
      });
    const r = checkItem(b, p.scenario, bundle, lookup);
    if (r === true) matched++;
    else findings.push(r);
  });
  findings.push(...receiptFindings(p, text, delivered, lookup));
  return {findings, matched, bodies};
}
