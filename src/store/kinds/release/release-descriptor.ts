import {fail} from '../../../errors.js';
import {
  descriptorDigest,
  versionKey,
  versionNameProblem,
  type ReleaseDescriptor,
} from '../../../model/release/release.js';
import {readDocument} from '../../documents.js';
import {isDirectory, listDir} from '../../files/fs.js';
import type {Findings} from '../../findings.js';
import type {KindContext} from '../common/kind-context.js';

/**
 * context_bundles/releases/versions/<version, lowercased>.json (autoctx
 * addition): an immutable descriptor giving one bundle a release name. The
 * file is named by the lowercased version, so two names equal under case
 * folding are one file on every file system; a file whose name is not its
 * version's is refused on read.
 */
export const DESCRIPTOR_SCHEMA = 'release-descriptor' as const;
const FILE = /^[a-z0-9._-]{1,64}\.json$/;

function check(ctx: KindContext, d: ReleaseDescriptor, key: string): ReleaseDescriptor {
  if (d.scenario !== ctx.scenario)
    fail('DIGEST_MISMATCH', `names scenario ${JSON.stringify(d.scenario)}, not ${JSON.stringify(ctx.scenario)}`);
  const problem = versionNameProblem(d.version);
  if (problem) fail('INVALID_NAME', `version ${JSON.stringify(d.version)}: ${problem}`);
  if (versionKey(d.version) !== key)
    fail('DIGEST_MISMATCH', `names version ${JSON.stringify(d.version)} but is stored as ${key}.json`);
  if (descriptorDigest(d) !== d.digest)
    fail(
      'DIGEST_MISMATCH',
      `its digest ${d.digest} is not the digest of its content (${descriptorDigest(d)}): edited by hand`,
    );
  for (const v of [...d.rollback_targets, ...(d.parent_version ? [d.parent_version] : [])]) {
    const p = versionNameProblem(v);
    if (p) fail('INVALID_NAME', `names version ${JSON.stringify(v)}: ${p}`);
  }
  return d;
}

/** The descriptor stored under a version's key (any spelling of the name finds it), or null. */
export function readDescriptor(ctx: KindContext, version: string): ReleaseDescriptor | null {
  const key = versionKey(version);
  return readDocument<ReleaseDescriptor>(ctx.guard, ctx.paths.releaseVersion(key), DESCRIPTOR_SCHEMA, (v) =>
    check(ctx, v as unknown as ReleaseDescriptor, key),
  );
}

/** The stored descriptor files' keys (lowercased versions), sorted. */
export function listDescriptorKeys(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.releaseVersionsDir)
    .filter((e) => e.isFile() && e.name.endsWith('.json'))
    .map((e) => e.name.slice(0, -5))
    .sort();
}

/** Under the scenario lock: write a new descriptor (immutable; the same bytes again are accepted). */
export function createDescriptor(ctx: KindContext, d: ReleaseDescriptor): boolean {
  return ctx.writer.createDocument(ctx.paths.releaseVersion(d.version), DESCRIPTOR_SCHEMA, d);
}

/**
 * verify: every descriptor reads back (schema, its file named by its
 * lowercased version), names a stored bundle that verified, a parent and
 * rollback targets that are descriptors; no two name one bundle, or one name
 * under case folding. Returns the descriptors by key.
 */
export function verifyDescriptors(
  c: Findings,
  served: (target: ReleaseDescriptor, scope: string) => boolean,
): Map<string, ReleaseDescriptor> {
  const {store} = c;
  const out = new Map<string, ReleaseDescriptor>();
  if (!isDirectory(store.paths.releaseVersionsDir)) return out;
  for (const e of listDir(store.guard, store.paths.releaseVersionsDir)) {
    if (e.name.startsWith('.')) continue; // a temporary file a crash left: the leftover check names it
    const file = `${store.paths.releaseVersionsDir}/${e.name}`;
    if (!e.isFile() || !FILE.test(e.name)) {
      // A name that is not lowercase is another spelling of a version: on a case-insensitive file system it would be
      // the same file.
      c.error(
        file,
        'DUPLICATE_VERSION',
        `${c.rel(file)}: descriptors are stored under the lowercased version name ` +
          `(${e.name.toLowerCase()}); this file names a version a second time under case folding, or is not ` +
          `a descriptor`,
      );
      continue;
    }
    const key = e.name.slice(0, -5);
    const d = c.attempt(file, () => readDescriptor(store, key));
    if (d) out.set(key, d);
  }
  const byDigest = new Map<string, string>();
  for (const [key, d] of out) {
    const file = store.paths.releaseVersion(key);
    if (!c.bundles.has(d.bundle_digest))
      c.error(
        file,
        'MISSING_BUNDLE',
        `${c.rel(file)}: release ${d.version} names bundle ${d.bundle_digest}, which the scenario does not ` +
          `hold (or which did not verify)`,
      );
    const other = byDigest.get(d.bundle_digest);
    if (other !== undefined)
      c.error(
        file,
        'DUPLICATE_VERSION',
        `${c.rel(file)}: release ${d.version} names bundle ${d.bundle_digest}, which release ` +
          `${out.get(other)!.version} already names`,
      );
    else byDigest.set(d.bundle_digest, key);
    const lost = (v: string, what: string) => {
      const gone = store.paths.releaseVersion(v);
      c.error(gone, 'MISSING_RELEASE', `${c.rel(gone)} is missing: ${c.rel(file)} names ${v} as its ${what}`);
    };
    if (d.parent_version !== null && !out.has(versionKey(d.parent_version))) lost(d.parent_version, 'parent version');
    for (const t of d.rollback_targets) {
      const target = out.get(versionKey(t));
      if (!target) lost(t, 'rollback target');
      else if (!served(target, d.rollback_scope))
        c.error(
          file,
          'ROLLBACK_NOT_SERVED',
          `${c.rel(file)}: rollback target ${t} (bundle ${target.bundle_digest}) has never served in scope ` +
            `${d.rollback_scope}`,
        );
    }
  }
  return out;
}
