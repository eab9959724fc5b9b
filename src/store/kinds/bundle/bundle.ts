import fs from 'node:fs';
import {fail, isSystemError, isAutoctxError, rethrowUnless} from '../../../errors.js';
import {validateBundle, type ContextBundle} from '../../../model/bundle/bundle.js';
import {readDocument} from '../../documents.js';
import {listDir, withBytes} from '../../files/fs.js';
import {outlineFromBytes} from '../../../model/bundle/bundle-outline.js';
import type {KindContext} from '../common/kind-context.js';
import {writeHarnessRuntime} from './harness-runtime.js';
import type {BundleOutline} from '../../../model/bundle/bundle.js';
import type {Findings} from '../../findings.js';
import type {ScenarioRepair} from '../common/kind-steps.js';

/**
 * context_bundles/bundles/<digest>.json: immutable manifests, checked key by key by validateBundle (the schema is
 * implied).
 */
export const BUNDLE_SCHEMA = 'manifest' as const;
const HEX64 = /^[0-9a-f]{64}$/;

export function hasBundle(ctx: KindContext, digest: string): boolean {
  return ctx.guard.present(ctx.paths.bundle(digest));
}

export function readBundle(ctx: KindContext, digest: string): ContextBundle | null {
  return readDocument(ctx.guard, ctx.paths.bundle(digest), {implied: BUNDLE_SCHEMA}, (value) => {
    const bundle = validateBundle(value);
    if (bundle.digest !== digest)
      fail('DIGEST_MISMATCH', `file name says ${digest} but the manifest digest is ${bundle.digest}`);
    return bundle;
  });
}

/**
 * verify: a manifest's outline, re-hashed and checked as readBundle checks
 * it. A manifest in the plain spelling is hashed from its bytes
 * (outlineFromBytes); any other, and any that fails there, is read by
 * readBundle, which decides and names the problem.
 */
export function readBundleOutline(ctx: KindContext, digest: string): BundleOutline | null {
  const fast = withBytes(ctx.guard, ctx.paths.bundle(digest), (bytes) => ({outline: outlineFromBytes(bytes, digest)}));
  if (fast?.outline) return fast.outline;
  const b = readBundle(ctx, digest);
  return (
    b && {
      ...b,
      components: b.components.map(({kind, key, media_type, digest: d, state}) => ({
        kind,
        key,
        media_type,
        digest: d,
        ...(state !== undefined ? {state} : {}),
      })),
    }
  );
}

/** The manifest's JSON as stored, without re-hashing it (for the texts of a manifest already verified). */
export function readBundleTexts(ctx: KindContext, digest: string): ContextBundle | null {
  return readDocument<ContextBundle>(ctx.guard, ctx.paths.bundle(digest), BUNDLE_SCHEMA);
}

export function requireBundle(ctx: KindContext, digest: string): ContextBundle {
  const b = readBundle(ctx, digest);
  if (!b) fail('DIGEST_NOT_FOUND', `no bundle ${digest} in scenario "${ctx.scenario}"`, {digest});
  return b;
}

/** The manifest, then its harness validators' runtime files (which derive from it). */
export function writeBundle(ctx: KindContext, bundle: ContextBundle): boolean {
  const created = ctx.writer.createDocument(ctx.paths.bundle(bundle.digest), BUNDLE_SCHEMA, bundle);
  writeHarnessRuntime(ctx, bundle);
  return created;
}

export function listBundleDigests(ctx: KindContext): string[] {
  return listDir(ctx.guard, ctx.paths.bundlesDir)
    .filter((e) => e.isFile() && e.name.endsWith('.json') && HEX64.test(e.name.slice(0, -5)))
    .map((e) => e.name.slice(0, -5));
}

/**
 * verify: a manifest that re-hashed to its name joins the outlines the other checks use; one labelled for another
 * scenario is a warning.
 */
export function verifyBundle(c: Findings, digest: string, outline: BundleOutline): void {
  if (outline.scenario !== c.store.scenario)
    c.warn(
      c.store.paths.bundle(digest),
      'SCENARIO_LABEL',
      `bundle ${digest} is labelled for scenario "${outline.scenario}"`,
    );
  const stated = outline.components.filter((x) => x.state !== undefined);
  if (stated.length > 0) {
    c.note(
      c.store.paths.bundle(digest),
      'ELEMENT_STATES',
      `bundle ${digest} has ${stated.length} non-present component${stated.length === 1 ? '' : 's'} (${stated
        .slice(0, 3)
        .map((x) => `${x.kind}/${x.key} ${x.state}`)
        .join(
          ', ',
        )}${stated.length > 3 ? ', …' : ''}): an autoctx extension, which the Python implementation cannot read`,
    );
  }
  c.bundles.set(digest, outline);
}

/** The stored size of these manifests in bytes: lstat only (a link is not followed), never a read. */
export function manifestBytes(ctx: KindContext, digests: readonly string[]): number {
  let total = 0;
  for (const d of digests) {
    try {
      total += fs.lstatSync(ctx.paths.bundle(d)).size;
    } catch (error) {
      rethrowUnless(error, isSystemError, isAutoctxError);
      // a manifest gone since the listing: its check says so
    }
  }
  return total;
}

/** repair: harness validators' runtime files derive from their manifests; missing or changed ones are written again. */
export const harnessRuntimeRepair: ScenarioRepair = {
  order: 200,
  repair({store, rel, actions, remaining}) {
    for (const digest of listBundleDigests(store)) {
      try {
        const bundle = readBundle(store, digest);
        if (!bundle?.components.some((x) => x.kind === 'harness_validator')) continue;
        for (const key of writeHarnessRuntime(store, bundle))
          actions.push(`wrote ${rel(store.paths.harnessFile(digest, key))} from its manifest`);
      } catch (error) {
        if (!isAutoctxError(error)) throw error;
        remaining.push(
          `${rel(store.paths.bundle(digest))}: ${error.message}; its runtime validators, if any, are left as they are`,
        );
      }
    }
  },
};
