import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import {
  BOOTSTRAP_LAYOUT,
  DEFAULT_SAMPLING,
  MAX_PROMPT_BYTES,
  PACKAGE_SCHEMA_ID,
  expiresAt,
  packageDigest,
  packageId,
  sampleDelivery,
  type EvidencePackage,
  type PackageInput,
  type SamplingSettings,
} from '../../model/delivery/package-layout.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {assertSchema, readInputJson, type KnowledgeStore, type StateArea} from '../../store/index.js';
import {
  listPackageIds,
  readInspection,
  readPackage,
  readSampling,
  removePackage,
  writePackage,
  writeSampling,
} from '../../store/kinds/inspection/evidence-package.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../common/store-options.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';
import {requireActive} from '../../store/kinds/promotion/active-pointer.js';

/**
 * Delivery evidence (spec 003, ARCHITECTURE §12): `autoctx evidence seal`,
 * the hooks' sealing of each delivery under the same rules, and `evidence
 * prune`. Packages live in the state area (they may hold personal data:
 * never committed, files 0600).
 */
export interface SealResult {
  status: 'sealed' | 'not_sampled';
  scenario: string;
  package_id: string | null;
  reason: 'window' | 'percent' | 'not_sampled';
  since_change: number;
}

function checkInput(value: unknown, what: string): PackageInput {
  assertSchema('evidence-package', value, what);
  const p = value as PackageInput;
  for (const field of ['system_prompt', 'user_prompt'] as const) {
    const bytes = Buffer.byteLength(p[field], 'utf8');
    if (bytes > MAX_PROMPT_BYTES)
      fail('INPUT_TOO_LARGE', `${what}: ${field} is ${bytes} bytes, over the limit of ${MAX_PROMPT_BYTES}`, {
        file: what,
      });
  }
  return p;
}

/** The sampling settings: the team's (autoctx.config.json "evidence"), over the defaults. */
export function samplingOf(knowledge: KnowledgeStore): SamplingSettings {
  const e = knowledge.evidenceSettings();
  return {window: e.window ?? DEFAULT_SAMPLING.window, percent: e.percent ?? DEFAULT_SAMPLING.percent};
}

/**
 * Under the state lock: decide by the sampling rules and, when sampled,
 * seal the package. The window restarts whenever the bundle active.json
 * names differs from the one it began with.
 */
export function sealLocked(
  area: StateArea,
  input: PackageInput,
  activeDigest: string,
  at: Date,
  source: 'seal' | 'hook',
  settings: SamplingSettings = DEFAULT_SAMPLING,
): SealResult {
  const decision = sampleDelivery(
    readSampling(area, input.scenario),
    input.scenario,
    activeDigest,
    input.correlation_id,
    settings,
  );
  let id: string | null = null;
  if (decision.sealed) {
    id = packageId(input);
    // The same delivery sealed again (a re-run after a crash): one package, as it was first sealed.
    if (!readPackage(area, input.scenario, id)) {
      const body = {schema_version: 1 as const, package_id: id, source, sealed_at: isoTimestamp(at), package: input};
      const pkg: EvidencePackage = {...body, digest: packageDigest(body)};
      writePackage(area, pkg);
    }
  }
  writeSampling(area, decision.next);
  return {
    status: decision.sealed ? 'sealed' : 'not_sampled',
    scenario: input.scenario,
    package_id: id,
    reason: decision.reason,
    since_change: decision.next.since_change,
  };
}

/** `autoctx evidence seal --from PACKAGE.json`: both answers exit 0. */
export async function evidenceSeal(options: StoreOptions & {from: string}): Promise<SealResult> {
  const input = checkInput(readInputJson(options.from), options.from);
  lockTimeout(options);
  const knowledge = openKnowledge(options);
  const store = knowledge.scenario(knowledge.resolveScenario(input.scenario));
  if (!readBundle(store, input.bundle_digest))
    fail('DIGEST_NOT_FOUND', `${options.from}: scenario "${input.scenario}" holds no bundle ${input.bundle_digest}`, {
      file: options.from,
    });
  const active = requireActive(store);
  const settings = samplingOf(knowledge);
  const area = knowledge.state();
  return area.withLock(lockTimeout(options), () =>
    sealLocked(area, input, active.bundle_digest, now(options), 'seal', settings),
  );
}

/**
 * The hooks' sealing of one delivery, under the state lock they hold: the
 * exact context injected and its receipt, the receipt id as the correlation
 * id, nothing else from the host.
 */
export function sealDelivery(
  knowledge: KnowledgeStore,
  area: StateArea,
  d: {
    scenario: string;
    content: string;
    receipt: Record<string, unknown> & {receipt_id: string};
    bundleDigest: string;
    version: string | null;
    at: Date;
  },
): SealResult {
  const active = requireActive(knowledge.scenario(d.scenario));
  const input: PackageInput = {
    schema: PACKAGE_SCHEMA_ID,
    scenario: d.scenario,
    correlation_id: d.receipt.receipt_id,
    bundle_digest: d.bundleDigest,
    ...(d.version !== null ? {release_version: d.version} : {}),
    layout: BOOTSTRAP_LAYOUT,
    system_prompt: '',
    user_prompt: d.content,
    metadata: {receipt: d.receipt},
  };
  let settings = DEFAULT_SAMPLING;
  try {
    settings = samplingOf(knowledge);
  } catch (error) {
    // A hook fails open: a malformed team file fails the commands that read it, and the hook seals by the defaults.
    rethrowUnless(error, isAutoctxError);
  }
  return sealLocked(area, input, active.bundle_digest, d.at, 'hook', settings);
}

export interface PruneResult {
  status: 'ok';
  scenario: string;
  removed: string[];
  kept: number;
}

/** `autoctx evidence prune [--now T]`: 90 days after sealing, 30 when the latest inspection was PASS. */
export async function evidencePrune(options: StoreOptions): Promise<PruneResult> {
  lockTimeout(options);
  const knowledge = openKnowledge(options);
  const scenario = knowledge.resolveScenario(options.scenario);
  const area = knowledge.state();
  const at = now(options).getTime();
  return area.withLock(lockTimeout(options), () => {
    const removed: string[] = [];
    let kept = 0;
    for (const id of listPackageIds(area, scenario)) {
      let sealedAt: string;
      let verdict: string | null = null;
      try {
        const p = readPackage(area, scenario, id);
        if (!p) continue;
        sealedAt = p.sealed_at;
        const i = readInspection(area, scenario, id);
        verdict = i && i.package_digest === p.digest ? i.verdict : null;
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        kept++; // a package that does not read back is kept for a person to look at (inspect reports it ERROR)
        continue;
      }
      if (at >= expiresAt(sealedAt, verdict)) {
        removePackage(area, scenario, id);
        removed.push(id);
      } else kept++;
    }
    return {status: 'ok', scenario, removed, kept};
  });
}
