import {bodyChunks} from '../delivery/bootstrap-text.js';
import type {ContextBundle} from '../bundle/bundle.js';
import {BOOTSTRAP_LAYOUT, COMPONENTS_LAYOUT, type EvidencePackage} from '../delivery/package-layout.js';
import {inspectBootstrap} from './inspector-bootstrap.js';
import type {Finding, InspectorLookup, Verdict} from './inspector-types.js';

/**
 * The prompt inspector (spec 003, "Prompt inspector"; reference C.4): a
 * sealed package checked against the bundle it claims. A bootstrap package
 * is rebuilt byte for byte from autoctx's framing, the sources its items
 * cite and the receipt that names them (inspector-bootstrap.ts); a
 * components package must hold each present component verbatim. It counts
 * what matched, what did not and what could not be checked, and points at
 * problems for a person; it never changes a prompt, a decision or a rule.
 * Pure. Version 2: every byte of a bootstrap package accounted for, and its
 * items compared with its receipt (version 1 searched for the items only).
 */
export const INSPECTOR_VERSION = 2;
export const INSPECTOR = `prompt-inspector/${INSPECTOR_VERSION}`;

export type {Finding, InspectorLookup, ReceiptView, Verdict} from './inspector-types.js';

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
export const CHECKED_KINDS = [
  'playbook',
  'hints',
  'prompt_fragment',
  'tool_guidance',
  'policy',
  'completion_check',
] as const;

/** Absent texts shorter than this are not searched: too short to tell from ordinary words. */
const MIN_ABSENT_TEXT = 16;

function lf(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** A body as the bootstrap package quotes it (line endings to LF, controls and format characters escaped). */
function rendered(body: string): string {
  return bodyChunks(body).text.join('');
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
  return {
    inspector_version: INSPECTOR,
    checked_against: `${layout}@${bundleDigest.slice(0, 12)}`,
    verdict: 'ERROR',
    matched: 0,
    mismatched: 0,
    unverifiable: 0,
    findings: [{code: 'UNVERIFIABLE', check: 'cited_item', subject: 'package', detail}],
  };
}

export function inspect(pkg: EvidencePackage, bundle: ContextBundle, lookup: InspectorLookup): Inspection {
  const p = pkg.package;
  const layout = p.layout ?? 'unknown';
  const findings: Finding[] = [];
  let matched = 0;
  const prompt = lf(`${p.system_prompt}\n${p.user_prompt}`);
  const layoutKnown = layout === BOOTSTRAP_LAYOUT || layout === COMPONENTS_LAYOUT;
  let bodies: string[] = [];
  if (layout === BOOTSTRAP_LAYOUT) {
    const check = inspectBootstrap(pkg, bundle, lookup);
    findings.push(...check.findings);
    matched += check.matched;
    bodies = check.bodies;
  } else if (layout === COMPONENTS_LAYOUT) {
    for (const c of bundle.components) {
      if (!(CHECKED_KINDS as readonly string[]).includes(c.kind) || c.state === 'ABSENT') continue;
      const subject = `${c.kind}/${c.key}`;
      if (c.state !== undefined)
        findings.push({
          code: 'UNVERIFIABLE',
          check: 'component_delivered',
          subject,
          detail: `the component is ${c.state}: unverifiable by design`,
        });
      else if (prompt.includes(lf(c.content).replace(/\n+$/, ''))) matched++;
      else findings.push({code: 'MISMATCH', check: 'component_delivered', subject, detail: 'not delivered verbatim'});
    }
  }
  // Layout-free: no ABSENT component delivered, in the prompts as they are or as the bootstrap package quotes it.
  const unquoted = bodies.join('\n');
  for (const c of bundle.components) {
    if (c.state !== 'ABSENT') continue;
    const subject = `${c.kind}/${c.key}`;
    const texts = [
      ...new Set(
        lookup
          .textsOf(c.kind, c.key)
          .map((x) => lf(x).trim())
          .filter((x) => x.length >= MIN_ABSENT_TEXT),
      ),
    ];
    if (texts.length === 0) {
      findings.push({
        code: 'UNVERIFIABLE',
        check: 'absent_not_delivered',
        subject,
        detail: 'no stored text of it is long enough to search for',
      });
      continue;
    }
    const leaked = texts.some((x) => prompt.includes(x) || unquoted.includes(rendered(x)));
    if (leaked)
      findings.push({
        code: 'MISMATCH',
        check: 'absent_not_delivered',
        subject,
        detail: 'the bundle declares it ABSENT, but its text was delivered',
      });
    else matched++;
  }
  const mismatched = findings.filter((f) => f.code === 'MISMATCH').length;
  const unverifiable = findings.filter((f) => f.code === 'UNVERIFIABLE').length;
  return {
    inspector_version: INSPECTOR,
    checked_against: `${layout}@${bundle.digest.slice(0, 12)}`,
    verdict: verdictOf(false, findings, layoutKnown),
    matched,
    mismatched,
    unverifiable,
    findings,
  };
}
