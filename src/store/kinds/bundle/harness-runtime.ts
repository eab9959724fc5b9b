import type {ContextBundle} from '../../../model/bundle/bundle.js';
import {harnessRuntime, harnessRuntimeFiles, type RuntimeFile} from '../../../model/bundle/harness-runtime.js';
import {readBytes} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';
import {readDocument} from '../../documents.js';
import type {ScenarioCheck} from '../common/kind-steps.js';

/**
 * context_bundles/runtime/<digest>/harness/<key>.py: a bundle's harness
 * validators, written after its manifest, as the Python implementation's
 * store writes them and its serving path loads them (model/harness-runtime).
 * They derive from the manifest: a missing one is written back by repair.
 */
function fileText(ctx: KindContext, file: string): string | null {
  return readBytes(ctx.guard, file)?.toString('utf8') ?? null;
}

/** Write the runtime files of a bundle that are missing or differ; returns the keys written. */
export function writeHarnessRuntime(ctx: KindContext, bundle: ContextBundle): string[] {
  const written: string[] = [];
  for (const f of harnessRuntimeFiles(bundle)) {
    const file = ctx.paths.harnessFile(bundle.digest, f.key);
    if (fileText(ctx, file) === f.text) continue;
    ctx.writer.replace(file, f.text);
    written.push(f.key);
  }
  return written;
}

/** The runtime files a verified bundle should have, or the problem that keeps it from having them. */
function expectedFiles(c: Findings, digest: string): RuntimeFile[] | string {
  // bundle.ts's readBundleTexts (which imports this module)
  const bundle = c.attempt(c.store.paths.bundle(digest), () =>
    readDocument<ContextBundle>(c.store.guard, c.store.paths.bundle(digest), 'manifest'),
  );
  if (!bundle) return [];
  const r = harnessRuntime(bundle);
  return 'problem' in r ? r.problem : r.files;
}

/**
 * verify: every verified bundle with harness validators has their runtime
 * files, byte for byte (a missing one is a warning; another text is an error:
 * upstream would serve code the bundle does not hold); a .py file in a
 * bundle's harness folder that the bundle does not name is an error (upstream
 * loads every *.py there); a runtime folder of a bundle the store does not
 * hold is a warning.
 */
export function verifyHarnessRuntime(c: Findings): void {
  const {store} = c;
  const expected = new Map<string, string>();
  for (const [digest, outline] of c.bundles) {
    if (!outline.components.some((x) => x.kind === 'harness_validator')) continue;
    const files = expectedFiles(c, digest);
    if (typeof files === 'string') {
      c.error(
        store.paths.bundle(digest),
        'RUNTIME_MISMATCH',
        `${c.rel(store.paths.bundle(digest))}: ${files}, so its runtime validators cannot be derived`,
      );
      continue;
    }
    for (const f of files) {
      const file = store.paths.harnessFile(digest, f.key);
      expected.set(file, f.text);
      const text = c.attempt(file, () => fileText(store, file));
      if (text === null)
        c.warn(
          file,
          'MISSING_RUNTIME',
          `${c.rel(file)} is missing: the Python implementation would serve bundle ${digest} without ` +
            `validator ${f.key} (autoctx repair writes it from the manifest)`,
        );
      else if (text !== undefined && text !== f.text)
        c.error(
          file,
          'RUNTIME_MISMATCH',
          `${c.rel(file)} is not the harness validator ${f.key} of bundle ${digest}: the Python ` +
            `implementation would serve this code instead (autoctx repair writes it from the manifest)`,
        );
    }
  }
  const prefix = store.paths.runtimeDir;
  for (const e of c.entries()) {
    if (e.kind !== 'file' || !e.path.startsWith(prefix) || expected.has(e.path)) continue;
    const [digest, folder, name] = e.path.slice(prefix.length + 1).split(/[\\/]/);
    if (digest === undefined || !c.bundles.has(digest))
      c.warn(e.path, 'RUNTIME_ORPHAN', `${c.rel(e.path)} belongs to no bundle of this store`);
    else if (folder === 'harness' && name?.endsWith('.py'))
      c.error(
        e.path,
        'RUNTIME_MISMATCH',
        `${c.rel(e.path)} is no harness validator of bundle ${digest}, but the Python implementation would ` +
          `load it as one`,
      );
  }
}

export const harnessRuntimeCheck: ScenarioCheck = {
  order: 200,
  scenario(c) {
    verifyHarnessRuntime(c);
  },
};
