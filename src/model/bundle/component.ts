import {canonicalJson, sha256Hex, stableDigest} from '../../canonical/index.js';
import {componentBodyText, escapeComponent, type EscapedComponent} from './component-text.js';
import {fail} from '../../errors.js';
import {isComponentKind, type ComponentKind} from './kinds.js';
import {isNonPresentState, nonPresentDigest, type NonPresentState} from './element-state.js';

/** One piece of context: its kind, key, text content and media type, plus its digest. */
export interface BundleComponent {
  kind: ComponentKind;
  key: string;
  content: string;
  media_type: string;
  digest: string;
  /** Absent for a present component (element-state.ts). */
  state?: NonPresentState;
}

export interface ComponentInput {
  kind: string;
  key: string;
  content: string;
  media_type?: string;
  state?: string | undefined;
}

/** Digest over {content, key, kind, media_type}, as the reference defines it. */
export function componentDigest(c: {kind: string; key: string; content: string; media_type: string}): string {
  return digestWithEscape(c).digest;
}

/** The digest, and the escaped texts it was taken over (undefined when the generic encoder took it). */
function digestWithEscape(c: {kind: string; key: string; content: string; media_type: string}): {
  digest: string;
  escaped: EscapedComponent | undefined;
} {
  const escaped = escapeComponent(c);
  if (escaped) return {digest: sha256Hex(componentBodyText(escaped)), escaped};
  return {digest: stableDigest({content: c.content, key: c.key, kind: c.kind, media_type: c.media_type}), escaped};
}

function isBlank(value: string): boolean {
  return value.trim().length === 0;
}

/** Build a component, validating kind, key and media type. */
export function createComponent(input: ComponentInput): BundleComponent {
  return createEscapedComponent(input).component;
}

/** createComponent, also giving the escaped texts so that the manifest digest need not escape the content again. */
export function createEscapedComponent(input: ComponentInput): {
  component: BundleComponent;
  escaped: EscapedComponent | undefined;
} {
  const mediaType = input.media_type ?? 'text/plain';
  if (!isComponentKind(input.kind))
    fail('UNKNOWN_KIND', `unknown component kind "${String(input.kind)}"`, {kind: input.kind});
  if (typeof input.key !== 'string' || isBlank(input.key))
    fail('SCHEMA_VIOLATION', `component ${input.kind} has a blank key`);
  if (typeof input.content !== 'string')
    fail('SCHEMA_VIOLATION', `component ${input.kind}/${input.key} content must be a string`);
  if (typeof mediaType !== 'string' || isBlank(mediaType))
    fail('SCHEMA_VIOLATION', `component ${input.kind}/${input.key} has a blank media_type`);
  const base = {kind: input.kind, key: input.key, content: input.content, media_type: mediaType};
  if (input.state !== undefined && input.state !== 'PRESENT') {
    const state = input.state;
    if (!isNonPresentState(state))
      fail(
        'SCHEMA_VIOLATION',
        `component ${input.kind}/${input.key} has unknown state ${JSON.stringify(state)} (PRESENT, ABSENT, ` +
          `UNVERSIONED or INCLUDED)`,
      );
    if (input.content !== '')
      fail(
        'SCHEMA_VIOLATION',
        `component ${input.kind}/${input.key} is ${state}: a non-present component has empty content`,
      );
    return {component: {...base, digest: nonPresentDigest({...base, state}), state}, escaped: undefined};
  }
  const {digest, escaped} = digestWithEscape(base);
  return {component: {...base, digest}, escaped};
}

/** A JSON-valued component: content is the canonical JSON of the value. */
export function createJsonComponent(kind: string, key: string, value: unknown): BundleComponent {
  return createComponent({kind, key, content: canonicalJson(value), media_type: 'application/json'});
}
