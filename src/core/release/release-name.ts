/** `autoctx release name`: an immutable descriptor naming one bundle. */
import {requireBundle} from '../../store/kinds/bundle/bundle.js';
import {createHash} from 'node:crypto';
import path from 'node:path';
import {jsonEqual} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {
  assertVersionName,
  descriptorDigest,
  GLOBAL_SCOPE,
  normalizeScope,
  versionKey,
  type ReleaseDescriptor,
} from '../../model/release/release.js';
import {readFixtures} from '../../store/index.js';
import {readInputFile} from '../../store/io/input-files.js';
import {createDescriptor, readDescriptor} from '../../store/kinds/release/release-descriptor.js';
import {registryState} from '../../store/kinds/release/release-registry.js';
import {resolveActor} from '../common/actor.js';
import {lockTimeout, now, openScenario, type StoreOptions} from '../common/store-options.js';
import {resolveDigest} from '../common/resolve.js';
import {allDescriptors, globalChain} from './registry-view.js';
import {hasServed} from '../../model/promotion/served.js';
import {nonBlankList} from './release-input.js';

export interface NameOptions extends StoreOptions {
  version: string;
  digest: string;
  parentVersion?: string | undefined;
  rollbackTargets?: string[] | undefined;
  vocabularyVersion?: string | undefined;
  compatibleVocabularies?: string[] | undefined;
  modelProfiles?: string[] | undefined;
  goldenInputs?: string[] | undefined;
  scope?: string | undefined;
  actor?: string | undefined;
}

export interface NameResult {
  status: 'named';
  scenario: string;
  version: string;
  bundle_digest: string;
  already_named: boolean;
  descriptor: ReleaseDescriptor;
}

function goldenInput(file: string): {name: string; sha256: string; bytes: number} {
  readFixtures(file); // a fixtures file as evaluate reads it: one JSON fixture per line
  const bytes = readInputFile(file, true);
  return {name: path.basename(file), sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length};
}

/**
 * `autoctx release name VERSION DIGEST`: an immutable descriptor, every rule checked before anything is locked or
 * written.
 */
export async function releaseName(options: NameOptions): Promise<NameResult> {
  assertVersionName(options.version);
  if (options.parentVersion !== undefined) assertVersionName(options.parentVersion, 'parent version');
  const targets = nonBlankList(options.rollbackTargets, '--rollback-target');
  for (const t of targets) assertVersionName(t, 'rollback target');
  if (new Set(targets.map(versionKey)).size !== targets.length)
    fail('USAGE', '--rollback-target names one version twice (names are compared case-insensitively)');
  if (targets.some((t) => versionKey(t) === versionKey(options.version)))
    fail('USAGE', `release ${options.version} cannot be its own rollback target`);
  if (options.parentVersion !== undefined && versionKey(options.parentVersion) === versionKey(options.version))
    fail('USAGE', `release ${options.version} cannot be its own parent`);
  const vocabulary =
    options.vocabularyVersion === undefined
      ? null
      : nonBlankList([options.vocabularyVersion], '--vocabulary-version')[0]!;
  const compatible = nonBlankList(options.compatibleVocabularies, '--compatible-vocabulary');
  const profiles = nonBlankList(options.modelProfiles, '--model-profile');
  const golden = (options.goldenInputs ?? []).map(goldenInput);
  const scope = normalizeScope(options.scope);
  lockTimeout(options);
  const store = openScenario(options);
  const actor = resolveActor(options.actor, store.paths.dir);
  const digest = resolveDigest(store, options.digest);
  requireBundle(store, digest);
  return store.withLock(lockTimeout(options), () => {
    const existing = readDescriptor(store, options.version);
    const descriptors = allDescriptors(store);
    const byKey = (v: string) => descriptors.find((d) => versionKey(d.version) === versionKey(v));
    if (options.parentVersion !== undefined && !byKey(options.parentVersion))
      fail(
        'VERSION_NOT_FOUND',
        `parent version ${options.parentVersion} has no descriptor in scenario "${store.scenario}"`,
        {version: options.parentVersion},
      );
    const chain = globalChain(store);
    const scopeState = scope === GLOBAL_SCOPE ? null : registryState(store, scope);
    for (const t of targets) {
      const target = byKey(t);
      if (!target)
        fail('VERSION_NOT_FOUND', `rollback target ${t} has no descriptor in scenario "${store.scenario}"`, {
          version: t,
        });
      if (!hasServed(scope, target, {chain, receipts: scopeState?.receipts ?? []}))
        fail(
          'ROLLBACK_TARGET_NOT_SERVED',
          `rollback target ${t} has never served in scope ${scope}: ` +
            (scope === GLOBAL_SCOPE
              ? `no recorded pointer move made bundle ${target.bundle_digest} active`
              : 'no applied transition made it ACTIVE there'),
          {version: t},
        );
    }
    const body: Omit<ReleaseDescriptor, 'digest'> = {
      schema_version: 1,
      scenario: store.scenario,
      version: options.version,
      bundle_digest: digest,
      parent_version: options.parentVersion === undefined ? null : byKey(options.parentVersion)!.version,
      rollback_targets: targets.map((t) => byKey(t)!.version),
      rollback_scope: scope,
      vocabulary_version: vocabulary,
      compatible_vocabularies: compatible,
      model_profiles: profiles,
      golden_inputs: golden,
      actor,
      created_at: isoTimestamp(now(options)),
    };
    const descriptor: ReleaseDescriptor = {...body, digest: descriptorDigest(body)};
    if (existing) {
      // The same name again: the same descriptor (but for who and when) is the run before, answered as it was; anything
      // else is refused.
      const same = jsonEqual(
        {...existing, actor: '', created_at: '', digest: ''},
        {...descriptor, actor: '', created_at: '', digest: ''},
      );
      if (same)
        return {
          status: 'named',
          scenario: store.scenario,
          version: existing.version,
          bundle_digest: digest,
          already_named: true,
          descriptor: existing,
        };
      fail(
        'VERSION_EXISTS',
        `release ${existing.version} already exists` +
          (existing.version !== options.version
            ? ` (names are compared case-insensitively: ${options.version} is ${existing.version})`
            : '') +
          `, naming bundle ${existing.bundle_digest}; descriptors are immutable, give the new one another name`,
        {version: existing.version},
      );
    }
    const named = descriptors.find((d) => d.bundle_digest === digest);
    if (named)
      fail(
        'DIGEST_ALREADY_NAMED',
        `bundle ${digest} is already release ${named.version}; a bundle has one release name`,
        {version: named.version},
      );
    createDescriptor(store, descriptor);
    return {
      status: 'named',
      scenario: store.scenario,
      version: descriptor.version,
      bundle_digest: digest,
      already_named: false,
      descriptor,
    };
  });
}
