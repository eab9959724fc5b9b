import {stateOf, type ElementState} from './element-state.js';
import {FILE_HEADERS_ONLY, formatPatch, structuredPatch} from 'diff';
import type {BundleComponent} from './component.js';
import {isJsonParseError, rethrowUnless} from '../../errors.js';

/**
 * The content of a changed component as a unified diff (jsdiff), from the
 * comparison bundle's text to the tested bundle's: what `autoctx diff` shows
 * people, and gives in --json. JSON components are compared pretty-printed
 * (their stored content is one canonical line). Two texts too different to
 * diff within the time allowed give no hunks, said so.
 */
export interface ContentDiff {
  component_kind: string;
  component_key: string;
  change: 'added' | 'removed' | 'changed';
  /** The unified diff (---/+++ headers, @@ hunks); null when it could not be computed in time. */
  patch: string | null;
  hunks: Array<{old_start: number; old_lines: number; new_start: number; new_lines: number; lines: string[]}>;
  added_lines: number;
  removed_lines: number;
  /**
   * Each side's element state (null: the side lacks the component). ABSENT→PRESENT is a change, a replacement, never an
   * addition.
   */
  comparison_state: ElementState | null;
  tested_state: ElementState | null;
}

/** Milliseconds a diff of two texts may take before it is given up (a very large rewrite). */
export const DIFF_TIMEOUT_MS = 2000;

function shown(c: Pick<BundleComponent, 'content' | 'media_type'> | null): string {
  if (c === null) return '';
  if (c.media_type === 'application/json') {
    try {
      return `${JSON.stringify(JSON.parse(c.content), null, 2)}\n`;
    } catch (error) {
      rethrowUnless(error, isJsonParseError);
      return c.content;
    }
  }
  return c.content;
}

export function contentDiff(
  kind: string,
  key: string,
  before: Pick<BundleComponent, 'content' | 'media_type' | 'state'> | null,
  after: Pick<BundleComponent, 'content' | 'media_type' | 'state'> | null,
  names: {before: string; after: string},
): ContentDiff {
  const change = before === null ? 'added' : after === null ? 'removed' : 'changed';
  const states = {
    comparison_state: before === null ? null : stateOf(before),
    tested_state: after === null ? null : stateOf(after),
  };
  const patch = structuredPatch(
    before === null ? '/dev/null' : names.before,
    after === null ? '/dev/null' : names.after,
    shown(before),
    shown(after),
    undefined,
    undefined,
    {context: 3, timeout: DIFF_TIMEOUT_MS},
  );
  if (patch === undefined)
    return {
      component_kind: kind,
      component_key: key,
      change,
      patch: null,
      hunks: [],
      added_lines: 0,
      removed_lines: 0,
      ...states,
    };
  const hunks = patch.hunks.map((h) => ({
    old_start: h.oldStart,
    old_lines: h.oldLines,
    new_start: h.newStart,
    new_lines: h.newLines,
    lines: h.lines,
  }));
  const count = (sign: string) => hunks.reduce((n, h) => n + h.lines.filter((l) => l.startsWith(sign)).length, 0);
  return {
    component_kind: kind,
    component_key: key,
    change,
    patch: formatPatch(patch, FILE_HEADERS_ONLY),
    hunks,
    added_lines: count('+'),
    removed_lines: count('-'),
    ...states,
  };
}
