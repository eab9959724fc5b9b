import {prettyJson} from '../../canonical/index.js';
import {fail, isAutoctxError, isSystemError, rethrowUnless} from '../../errors.js';
import type {ContextBundle} from '../../model/bundle/bundle.js';
import {inspectionSampled, type EvidencePackage} from '../../model/delivery/package-layout.js';
import {
  INSPECTOR,
  INSPECTOR_VERSION,
  errorInspection,
  inspect,
  type InspectorLookup,
  type Verdict,
} from '../../model/inspection/inspector.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import type {ScenarioStore, StateArea} from '../../store/index.js';
import {
  listPackageIds,
  readInspection,
  readPackage,
  writeInspection,
  type StoredInspection,
} from '../../store/kinds/inspection/evidence-package.js';
import {readReceipt} from '../../store/kinds/delivery/bootstrap-receipt.js';
import {readHandoff} from '../../store/kinds/delivery/handoff.js';
import {lockTimeout, now, openKnowledge, type StoreOptions} from '../common/store-options.js';
import {listBundleDigests, readBundle} from '../../store/kinds/bundle/bundle.js';

/**
 * `autoctx inspect run` and `inspect show` (spec 003, "Prompt inspector"):
 * the oldest uninspected packages (or those inspected by a lower inspector
 * version), up to a batch, under the state area's lock, so that concurrent
 * runs never inspect one package twice. It reads; it writes only its own
 * results.
 */
export interface InspectRunResult {
  status: 'ok';
  scenario: string;
  inspector_version: string;
  inspected: Array<{package_id: string; verdict: Verdict | 'NOT_SAMPLED'}>;
  /** Packages still waiting for an inspection after this batch. */
  remaining: number;
}

function versionOf(v: string): number {
  return Number(v.slice('prompt-inspector/'.length));
}

/** Whether a package needs (another) inspection: none yet, of other bytes, or by a lower version. */
function due(i: StoredInspection | null, digest: string): boolean {
  return i === null || i.package_digest !== digest || versionOf(i.inspector_version) < INSPECTOR_VERSION;
}

function lookupFor(store: ScenarioStore, area: StateArea, claimed: ContextBundle): InspectorLookup {
  let others: ContextBundle[] | null = null;
  const bundles = () =>
    (others ??= listBundleDigests(store)
      .filter((d) => d !== claimed.digest)
      .flatMap((d) => {
        try {
          const b = readBundle(store, d);
          return b ? [b] : [];
        } catch (error) {
          rethrowUnless(error, isAutoctxError, isSystemError);
          return [];
        }
      }));
  return {
    handoff(id, revision) {
      try {
        const h = readHandoff(store, id, revision);
        return h ? {digest: h.content_digest, body: prettyJson(h.content).trimEnd()} : null;
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return null;
      }
    },
    otherComponent: (digest) =>
      bundles()
        .flatMap((b) => b.components)
        .find((c) => c.digest === digest && c.state === undefined) ?? null,
    receipt(id) {
      try {
        return readReceipt(area, id);
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        return null; // unreadable: the package is checked against what it carries
      }
    },
    textsOf: (kind, key) =>
      bundles().flatMap((b) =>
        b.components
          .filter((c) => c.kind === kind && c.key === key && c.state === undefined && c.content !== '')
          .map((c) => c.content),
      ),
  };
}

/** Inspect one package against the bundle it claims; a package or bundle that does not read back is ERROR. */
export function inspectOne(
  store: ScenarioStore,
  area: StateArea,
  id: string,
  at: Date,
  read?: EvidencePackage | null,
): StoredInspection {
  let digest = '0'.repeat(64);
  let result;
  try {
    // The package as the caller read it under this lock, else read (and checked) here.
    const p = read ?? readPackage(area, store.scenario, id);
    if (!p) fail('INPUT_NOT_FOUND', `no package ${id}`);
    digest = p.digest;
    let bundle: ContextBundle | null = null;
    try {
      bundle = readBundle(store, p.package.bundle_digest);
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
    }
    result = bundle
      ? inspect(p, bundle, lookupFor(store, area, bundle))
      : errorInspection(
          p.package.layout ?? 'unknown',
          p.package.bundle_digest,
          `the bundle it claims, ${p.package.bundle_digest.slice(0, 12)}, is not in the scenario or does not verify`,
        );
  } catch (error) {
    rethrowUnless(error, isAutoctxError);
    result = errorInspection('unknown', digest, `the package does not read back: ${error.message}`);
  }
  return {schema_version: 1, package_id: id, package_digest: digest, ...result, inspected_at: isoTimestamp(at)};
}

export async function inspectRun(
  options: StoreOptions & {batch?: number | undefined; samplePercent?: number | undefined},
): Promise<InspectRunResult> {
  const batch = options.batch ?? 50;
  if (!Number.isSafeInteger(batch) || batch < 1 || batch > 100_000)
    fail('USAGE', '--batch must be a whole number from 1 to 100000');
  if (
    options.samplePercent !== undefined &&
    (!Number.isSafeInteger(options.samplePercent) || options.samplePercent < 1 || options.samplePercent > 100)
  )
    fail('USAGE', '--sample-percent must be a whole number from 1 to 100');
  lockTimeout(options);
  const knowledge = openKnowledge(options);
  // The flag, else the team's setting (autoctx.config.json "evidence.inspection_percent"), else 100.
  const percent = options.samplePercent ?? knowledge.evidenceSettings().inspection_percent ?? 100;
  const store = knowledge.scenario(knowledge.resolveScenario(options.scenario));
  const area = knowledge.state();
  return area.withLock(lockTimeout(options), () => {
    const at = now(options);
    // Oldest first: by the time each was sealed, then by id.
    const waiting: Array<{id: string; sealedAt: string; pkg: EvidencePackage | null}> = [];
    for (const id of listPackageIds(area, store.scenario)) {
      let p;
      let i;
      try {
        p = readPackage(area, store.scenario, id);
        i = readInspection(area, store.scenario, id);
      } catch (error) {
        rethrowUnless(error, isAutoctxError, isSystemError);
        // inspected as ERROR
        if (!readInspectionQuiet(area, store.scenario, id)) waiting.push({id, sealedAt: '', pkg: null});
        continue;
      }
      if (p && due(i, p.digest)) waiting.push({id, sealedAt: p.sealed_at, pkg: p});
    }
    waiting.sort((a, b) => (a.sealedAt < b.sealedAt ? -1 : a.sealedAt > b.sealedAt ? 1 : a.id < b.id ? -1 : 1));
    const inspected: InspectRunResult['inspected'] = [];
    for (const {id, pkg} of waiting.slice(0, batch)) {
      const r: StoredInspection = inspectionSampled(id, percent)
        ? inspectOne(store, area, id, at, pkg)
        : {
            schema_version: 1,
            package_id: id,
            package_digest: pkg?.digest ?? '0'.repeat(64),
            inspector_version: INSPECTOR,
            checked_against: `${pkg?.package.layout ?? 'unknown'}@${(pkg?.package.bundle_digest ?? '').slice(0, 12)}`,
            verdict: 'NOT_SAMPLED',
            findings: [],
            matched: 0,
            mismatched: 0,
            unverifiable: 0,
            inspected_at: isoTimestamp(at),
          };
      writeInspection(area, store.scenario, r);
      inspected.push({package_id: id, verdict: r.verdict});
    }
    return {
      status: 'ok',
      scenario: store.scenario,
      inspector_version: INSPECTOR,
      inspected,
      remaining: Math.max(0, waiting.length - inspected.length),
    };
  });
}

function readInspectionQuiet(area: StateArea, scenario: string, id: string): StoredInspection | null {
  try {
    return readInspection(area, scenario, id);
  } catch (error) {
    rethrowUnless(error, isAutoctxError, isSystemError);
    return null;
  }
}

export interface InspectShowResult {
  status: 'ok';
  scenario: string;
  package_id: string;
  inspection: StoredInspection | null;
}

export function inspectShow(options: StoreOptions & {packageId: string}): InspectShowResult {
  const knowledge = openKnowledge(options);
  const store = knowledge.scenario(knowledge.resolveScenario(options.scenario));
  const area = knowledge.state();
  const p = readPackage(area, store.scenario, options.packageId);
  if (!p)
    fail(
      'INPUT_NOT_FOUND',
      `scenario "${store.scenario}" has no evidence package ${options.packageId} on this machine`,
      {package_id: options.packageId},
    );
  const i = readInspection(area, store.scenario, options.packageId);
  return {
    status: 'ok',
    scenario: store.scenario,
    package_id: options.packageId,
    inspection: i && i.package_digest === p.digest ? i : null,
  };
}

/** What status says of a scenario's evidence on this machine: packages, and the latest verdicts. */
export function evidenceSummary(
  area: StateArea,
  scenario: string,
): {packages: number; uninspected: number; verdicts: Record<string, number>} {
  const verdicts: Record<string, number> = {};
  let uninspected = 0;
  const ids = listPackageIds(area, scenario);
  for (const id of ids) {
    const i = readInspectionQuiet(area, scenario, id);
    if (!i || versionOf(i.inspector_version) < INSPECTOR_VERSION) uninspected++;
    else verdicts[i.verdict] = (verdicts[i.verdict] ?? 0) + 1;
  }
  return {packages: ids.length, uninspected, verdicts};
}
