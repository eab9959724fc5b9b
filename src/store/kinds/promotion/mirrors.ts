import type {ContextBundle} from '../../../model/bundle/bundle.js';
import {pythonRstrip} from '../../../model/common/python-text.js';
import {exists, readBytes} from '../../files/fs.js';
import type {KindContext} from '../common/kind-context.js';
import type {Findings} from '../../findings.js';

/**
 * playbook.md and hints.md: mirrors of the active bundle's playbook/playbook and hints/hints, for people and legacy
 * readers.
 */
export const MIRRORED = ['playbook', 'hints'] as const;
export type MirrorName = (typeof MIRRORED)[number];

/** The text a mirror holds for a bundle, or null when the bundle has no such component. */
export function mirrorText(bundle: ContextBundle | null, name: MirrorName): string | null {
  // a non-present component is never mirrored
  const c = bundle?.components.find((x) => x.kind === name && x.key === name && x.state === undefined);
  return c ? `${pythonRstrip(c.content)}\n` : null; // as the Python implementation writes it (str.rstrip)
}

export function readMirror(ctx: KindContext, name: MirrorName): string | null {
  return readBytes(ctx.guard, ctx.paths.mirror(name))?.toString('utf8') ?? null;
}

export function writeMirrors(ctx: KindContext, bundle: ContextBundle): void {
  for (const name of MIRRORED) {
    const text = mirrorText(bundle, name);
    if (text !== null) {
      // Written only when it differs: a re-run that finds the mirrors in line writes nothing.
      if (readBytes(ctx.guard, ctx.paths.mirror(name))?.toString('utf8') !== text)
        ctx.writer.replace(ctx.paths.mirror(name), text);
    } else if (exists(ctx.paths.mirror(name))) ctx.writer.remove(ctx.paths.mirror(name));
  }
}

/**
 * verify: playbook.md and hints.md mirror the served bundle. Another stored
 * bundle's text (or none) is an interrupted move, a warning; any other text
 * was edited by hand, an error. `texts` reads a stored bundle's texts.
 */
export function verifyMirrors(
  c: Findings,
  served: ContextBundle,
  texts: (digest: string) => ContextBundle | null,
): void {
  const {store} = c;
  for (const name of MIRRORED) {
    const file = store.paths.mirror(name);
    const text = c.attempt(file, () => readMirror(store, name)) ?? null;
    const want = mirrorText(served, name);
    if (text === want || (text !== null && want !== null && text.trimEnd() === want.trimEnd())) continue;
    const stored =
      text !== null && [...c.bundles.keys()].some((d) => mirrorText(texts(d), name)?.trimEnd() === text.trimEnd());
    if (text === null || stored)
      c.warn(
        file,
        'STALE_MIRROR',
        `${name}.md does not mirror the active bundle (an interrupted move; the next promote, rollback or ` +
          `repair rewrites it)`,
      );
    else
      c.error(
        file,
        'MIRROR_MISMATCH',
        `${c.rel(file)} was edited: it is the text of no stored bundle, and agents reading it are not ` +
          `served the active bundle (autoctx repair rewrites it)`,
      );
  }
}
