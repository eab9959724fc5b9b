import {stableDigest} from '../../canonical/index.js';

/**
 * Element states (spec 003, ARCHITECTURE §12), an autoctx extension of the
 * reference's component. PRESENT is the default and is written as no field
 * at all, so a bundle of present components keeps the reference's digest
 * byte for byte. The other three carry empty content:
 *  - ABSENT: the bundle deliberately lacks the element; a delivered prompt must not contain it;
 *  - UNVERSIONED: the host supplies the element at run time; it cannot be checked;
 *  - INCLUDED: the host includes it from a source outside the bundle.
 */
export const ELEMENT_STATES = ['PRESENT', 'ABSENT', 'UNVERSIONED', 'INCLUDED'] as const;
export type ElementState = (typeof ELEMENT_STATES)[number];
export type NonPresentState = Exclude<ElementState, 'PRESENT'>;

export const NON_PRESENT_STATES: readonly NonPresentState[] = ['ABSENT', 'UNVERSIONED', 'INCLUDED'];

export function isNonPresentState(value: unknown): value is NonPresentState {
  return typeof value === 'string' && (NON_PRESENT_STATES as readonly string[]).includes(value);
}

/** The fixed marker a non-present component's digest covers (versioned: a new encoding gets a new marker). */
export function elementStateMarker(state: NonPresentState): string {
  return `autoctx:element-state:v1:${state}`;
}

/**
 * A non-present component's digest: SHA-256 of the canonical JSON of
 * {content: "", key, kind, media_type, state_marker}. A present component's
 * digest is taken over {content, key, kind, media_type} (no state_marker
 * key), so no present content can spell a non-present digest.
 */
export function nonPresentDigest(c: {kind: string; key: string; media_type: string; state: NonPresentState}): string {
  return stableDigest({
    content: '',
    key: c.key,
    kind: c.kind,
    media_type: c.media_type,
    state_marker: elementStateMarker(c.state),
  });
}

/** A component's state: its field, or PRESENT when it has none. */
export function stateOf(c: {state?: NonPresentState | undefined}): ElementState {
  return c.state ?? 'PRESENT';
}

/** Present components only: what is mirrored, tagged, rendered, recalled and checked as text. */
export function isPresent(c: {state?: NonPresentState | undefined}): boolean {
  return c.state === undefined;
}
