import {bodyChunks} from './bootstrap-text.js';
import {BEGIN_MARKER, END_MARKER, TRUNCATION_MARK} from './bootstrap-render.js';
import type {ContextBundle} from './bundle.js';
import {BOOTSTRAP_LAYOUT, COMPONENTS_LAYOUT, type EvidencePackage} from './evidence.js';

/**
 * The prompt inspector (spec 003, "Prompt inspector"; reference C.4): a
 * sealed package checked against the bundle it claims, after undoing
 * autoctx's own framing (line endings, the quoting and escapes of the
 * bootstrap package). It counts what matched, what did not and what could
 * not be checked, and points at problems for a person; it never changes a
 * prompt, a decision or a rule. Pure.
 */
export const INSPECTOR_VERSION = 1;
export const INSPECTOR = `prompt-inspector/${INSPECTOR_VERSION}`;

export type Verdict = 'PASS' | 'FAIL' | 'INCOMPLETE' | 'NOT_APPLICABLE' | 'ERROR';

export interface Finding {
  code: 'MISMATCH' | 'UNVERIFIABLE';
  check: 'cited_item' | 'component_delivered' | 'absent_not_delivered';
  subject: string;
  detail: string;
}

export interface Inspection {
  inspector_version: string;
  /** What it was checked against: "<layout>@<first 12 hex of the bundle digest>". */
  checked_against: string;
  verdict: Verdict;
  matched: number;
  mismatched: number;
  unverifiable: number;
  findings: Finding[];
}

/** The kinds a components-layout package delivers verbatim: the texts a prompt is drawn from. */
export const CHECKED_KINDS = ['playbook', 'hints', 'prompt_fragment', 'tool_guidance', 'policy', 'completion_check'] as const;

/** Absent texts shorter than this are not searched: too short to tell from ordinary words. */
const MIN_ABSENT_TEXT = 16;

export interface InspectorLookup {
  /** A handoff revision's digest and rendered body, or null when the scenario holds none such. */
  handoff(id: string, revision: number): {digest: string; body: string} | null;
  /** Whether some stored bundle (not the claimed one) holds a component of this digest. */
  inOtherBundle(componentDigest: string): boolean;
  /** The texts a (kind, key) has in the claimed bundle's parent and in every stored bundle. */
  textsOf(kind: string, key: string): string[];
}

function lf(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** A body as the bootstrap package quotes it (line endings to LF, controls and format characters escaped). */
function rendered(body: string): string {
  return bodyChunks(body).text.join('');
}

interface CitedItem {
  kind: 'component' | 'handoff';
  key: string | null;
  componentKind: string | null;
  handoffId: string | null;
  revision: number | null;
  digest: string;
  truncated: boolean;
  body: string;
}

const ITEM = /^## Item \d+: (component|handoff)\n {4}scenario="(?:[^"\\]|\\.)*" (?:kind=("(?:[^"\\]|\\.)*") key=("(?:[^"\\]|\\.)*")|handoff=("(?:[^"\\]|\\.)*") revision=(\d+))\n {4}digest=([0-9a-f]*) truncated=(yes|no)\n\n/;

/** The cited items of a bootstrap package, the quoting undone; null when it is not one. */
export function citedItems(text: string): CitedItem[] | null {
  const t = lf(text);
  const begin = t.indexOf(`\n${BEGIN_MARKER}\n`);
  const end = t.lastIndexOf(`\n${END_MARKER}`);
  if (begin < 0 || end < begin) return null;
  const inner = t.slice(begin + BEGIN_MARKER.length + 2, end + 1);
  const items: CitedItem[] = [];
  for (const block of inner.split(/\n(?=## Item \d+: )/)) {
    const chunk = block.replace(/^\n+/, '');
    if (chunk.trim() === '') continue;
    const m = ITEM.exec(chunk);
    if (!m) return null;
    const quoted = chunk.slice(m[0].length).replace(/\n+$/, '');
    const lines = quoted.split('\n');
    if (!lines.every((l) => l.startsWith('> '))) return null;
    const parse = (s: string | undefined) => (s === undefined ? null : (JSON.parse(s) as string));
    items.push({
      kind: m[1] as 'component' | 'handoff',
      componentKind: parse(m[2]),
      key: parse(m[3]),
      handoffId: parse(m[4]),
      revision: m[5] !== undefined ? Number(m[5]) : null,
      digest: m[6]!,
      truncated: m[7] === 'yes',
      body: lines.map((l) => l.slice(2)).join('\n'),
    });
  }
  return items;
}

function bodyMatches(body: string, source: string, truncated: boolean): boolean {
  const expected = rendered(source);
  if (!truncated) return body === expected;
  return body.endsWith(TRUNCATION_MARK) && expected.startsWith(body.slice(0, -TRUNCATION_MARK.length)) && body.length - TRUNCATION_MARK.length < expected.length;
}

function verdictOf(error: boolean, findings: Finding[], layoutKnown: boolean): Verdict {
  if (error) return 'ERROR';
  if (findings.some((f) => f.code === 'MISMATCH')) return 'FAIL';
  if (!layoutKnown) return 'NOT_APPLICABLE';
  if (findings.some((f) => f.code === 'UNVERIFIABLE')) return 'INCOMPLETE';
  return 'PASS';
}

/** An inspection that could not run: the package or its bundle did not read back. */
export function errorInspection(layout: string, bundleDigest: string, detail: string): Inspection {
  return {inspector_version: INSPECTOR, checked_against: `${layout}@${bundleDigest.slice(0, 12)}`, verdict: 'ERROR', matched: 0, mismatched: 0, unverifiable: 0, findings: [{code: 'UNVERIFIABLE', check: 'cited_item', subject: 'package', detail}]};
}

export function inspect(pkg: EvidencePackage, bundle: ContextBundle, lookup: InspectorLookup): Inspection {
  const p = pkg.package;
  const layout = p.layout ?? 'unknown';
  const findings: Finding[] = [];
  let matched = 0;
  const prompt = lf(`${p.system_prompt}\n${p.user_prompt}`);
  const items = layout === BOOTSTRAP_LAYOUT ? citedItems(p.user_prompt) : null;
  const layoutKnown = layout === BOOTSTRAP_LAYOUT || layout === COMPONENTS_LAYOUT;
  if (layout === BOOTSTRAP_LAYOUT) {
    if (items === null) {
      findings.push({code: 'MISMATCH', check: 'cited_item', subject: 'package', detail: 'the user prompt is not a bootstrap package (its markers, citations or quoting are broken)'});
    } else {
      for (const item of items) {
        const subject = item.kind === 'handoff' ? `handoff ${item.handoffId}@${item.revision}` : `${item.componentKind}/${item.key}`;
        if (item.kind === 'handoff') {
          const h = lookup.handoff(item.handoffId ?? '', item.revision ?? 0);
          if (!h) findings.push({code: 'UNVERIFIABLE', check: 'cited_item', subject, detail: 'the scenario holds no such handoff revision'});
          else if (h.digest !== item.digest) findings.push({code: 'MISMATCH', check: 'cited_item', subject, detail: `cites digest ${item.digest.slice(0, 12)}, but that revision's is ${h.digest.slice(0, 12)}`});
          else if (!bodyMatches(item.body, h.body, item.truncated)) findings.push({code: 'MISMATCH', check: 'cited_item', subject, detail: item.truncated ? 'the truncated body is not a prefix of the handoff' : 'the body is not the handoff it cites'});
          else matched++;
          continue;
        }
        const c = bundle.components.find((x) => x.digest === item.digest);
        if (!c) {
          if (lookup.inOtherBundle(item.digest)) findings.push({code: 'UNVERIFIABLE', check: 'cited_item', subject, detail: `drawn with another bundle's component ${item.digest.slice(0, 12)}, not one of ${bundle.digest.slice(0, 12)}`});
          else findings.push({code: 'MISMATCH', check: 'cited_item', subject, detail: `cites component ${item.digest.slice(0, 12)}, which no stored bundle holds`});
        } else if (c.state !== undefined) findings.push({code: 'UNVERIFIABLE', check: 'cited_item', subject, detail: `the component is ${c.state}: unverifiable by design`});
        else if (c.kind !== item.componentKind || c.key !== item.key) findings.push({code: 'MISMATCH', check: 'cited_item', subject, detail: `the digest is that of ${c.kind}/${c.key}`});
        else if (!bodyMatches(item.body, c.content, item.truncated)) findings.push({code: 'MISMATCH', check: 'cited_item', subject, detail: item.truncated ? 'the truncated body is not a prefix of the component plus the mark' : 'the body is not the component it cites'});
        else matched++;
      }
    }
  } else if (layout === COMPONENTS_LAYOUT) {
    for (const c of bundle.components) {
      if (!(CHECKED_KINDS as readonly string[]).includes(c.kind) || c.state === 'ABSENT') continue;
      const subject = `${c.kind}/${c.key}`;
      if (c.state !== undefined) findings.push({code: 'UNVERIFIABLE', check: 'component_delivered', subject, detail: `the component is ${c.state}: unverifiable by design`});
      else if (prompt.includes(lf(c.content).replace(/\n+$/, ''))) matched++;
      else findings.push({code: 'MISMATCH', check: 'component_delivered', subject, detail: 'not delivered verbatim'});
    }
  }
  // Layout-free: no ABSENT component delivered, in the prompts as they are or as the bootstrap package quotes it.
  const unquoted = items ? items.map((i) => i.body).join('\n') : '';
  for (const c of bundle.components) {
    if (c.state !== 'ABSENT') continue;
    const subject = `${c.kind}/${c.key}`;
    const texts = [...new Set(lookup.textsOf(c.kind, c.key).map((x) => lf(x).trim()).filter((x) => x.length >= MIN_ABSENT_TEXT))];
    if (texts.length === 0) {
      findings.push({code: 'UNVERIFIABLE', check: 'absent_not_delivered', subject, detail: 'no stored text of it is long enough to search for'});
      continue;
    }
    const leaked = texts.some((x) => prompt.includes(x) || unquoted.includes(rendered(x)));
    if (leaked) findings.push({code: 'MISMATCH', check: 'absent_not_delivered', subject, detail: 'the bundle declares it ABSENT, but its text was delivered'});
    else matched++;
  }
  const mismatched = findings.filter((f) => f.code === 'MISMATCH').length;
  const unverifiable = findings.filter((f) => f.code === 'UNVERIFIABLE').length;
  return {inspector_version: INSPECTOR, checked_against: `${layout}@${bundle.digest.slice(0, 12)}`, verdict: verdictOf(false, findings, layoutKnown), matched, mismatched, unverifiable, findings};
}
