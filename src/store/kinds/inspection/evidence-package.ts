import {createHash} from 'node:crypto';
import {canonicalJson} from '../../../canonical/index.js';
import {fail} from '../../../errors.js';
import {packageDigest, type EvidencePackage, type SamplingState} from '../../../model/delivery/package-layout.js';
import type {Inspection} from '../../../model/inspection/inspector.js';
import {listDir} from '../../files/fs.js';
import type {StateArea} from '../../state-area.js';

/**
 * .state/evidence/<scenario key>/ (per machine, never committed, files 0600):
 * packages/<id>.json (one sealed delivery evidence package, immutable, its
 * integrity digest re-checked on every read), inspections/<id>.json (its
 * latest inspection) and sampling.json (deliveries decided since the bundle
 * active.json names last changed). Written under the state area's lock.
 */
export const RECORD_SCHEMA = 'evidence-record' as const;
export const INSPECTION_SCHEMA = 'evidence-inspection' as const;
export const SAMPLING_SCHEMA = 'evidence-sampling' as const;

export interface StoredInspection extends Omit<Inspection, 'verdict'> {
  schema_version: 1;
  /** The inspector's verdict, or NOT_SAMPLED: outside the inspection sample (by stable hash of the package id). */
  verdict: Inspection['verdict'] | 'NOT_SAMPLED';
  package_id: string;
  /** The digest of the package inspected (an inspection of other bytes does not count). */
  package_digest: string;
  inspected_at: string;
}

const ID = /^[0-9a-f]{32}$/;

function scenarioKey(scenario: string): string {
  return createHash('sha256')
    .update(canonicalJson(['autoctx-evidence-v1', scenario]))
    .digest('hex')
    .slice(0, 32);
}

export function evidenceDir(area: StateArea, scenario: string, ...rest: string[]): string {
  return area.file('evidence', scenarioKey(scenario), ...rest);
}

function packageFile(area: StateArea, scenario: string, id: string): string {
  if (!ID.test(id))
    fail(
      'INVALID_INPUT',
      `not a package id: ${JSON.stringify(id)} (32 hex characters, as inspect and evidence seal print them)`,
    );
  return evidenceDir(area, scenario, 'packages', `${id}.json`);
}

function inspectionFile(area: StateArea, scenario: string, id: string): string {
  packageFile(area, scenario, id); // the id checked
  return evidenceDir(area, scenario, 'inspections', `${id}.json`);
}

export function listPackageIds(area: StateArea, scenario: string): string[] {
  return listDir(area.guard, evidenceDir(area, scenario, 'packages'))
    .filter((e) => e.isFile() && /^[0-9a-f]{32}\.json$/.test(e.name))
    .map((e) => e.name.slice(0, 32))
    .sort();
}

/** A package, checked on read: its schema, its id and scenario, its integrity digest. */
export function readPackage(area: StateArea, scenario: string, id: string): EvidencePackage | null {
  return area.readDocument<EvidencePackage>(packageFile(area, scenario, id), RECORD_SCHEMA, (v) => {
    const p = v as unknown as EvidencePackage;
    if (p.package_id !== id) fail('DIGEST_MISMATCH', `names package ${p.package_id} but is stored as ${id}`);
    if (p.package.scenario !== scenario)
      fail('DIGEST_MISMATCH', `holds a package of scenario ${JSON.stringify(p.package.scenario)}`);
    if (packageDigest(p) !== p.digest)
      fail(
        'DIGEST_MISMATCH',
        'its integrity digest is not the digest of what it holds: the package was changed after it was sealed',
      );
    return p;
  });
}

/** Under the state lock: a package, immutable. */
export function writePackage(area: StateArea, p: EvidencePackage): void {
  area.writer.mkdir(evidenceDir(area, p.package.scenario, 'packages'));
  area.writer.createDocument(packageFile(area, p.package.scenario, p.package_id), RECORD_SCHEMA, p);
}

export function readInspection(area: StateArea, scenario: string, id: string): StoredInspection | null {
  return area.readDocument<StoredInspection>(inspectionFile(area, scenario, id), INSPECTION_SCHEMA, (v) => {
    const r = v as unknown as StoredInspection;
    if (r.package_id !== id) fail('DIGEST_MISMATCH', `is the inspection of ${r.package_id}, stored as ${id}'s`);
    return r;
  });
}

/** Under the state lock: the package's latest inspection. */
export function writeInspection(area: StateArea, scenario: string, r: StoredInspection): void {
  area.writer.mkdir(evidenceDir(area, scenario, 'inspections'));
  area.writer.replaceDocument(inspectionFile(area, scenario, r.package_id), INSPECTION_SCHEMA, r);
}

/** Under the state lock: a package and its inspection, removed (retention). */
export function removePackage(area: StateArea, scenario: string, id: string): void {
  const inspection = inspectionFile(area, scenario, id);
  if (area.readBytes(inspection)) area.writer.remove(inspection);
  area.writer.remove(packageFile(area, scenario, id));
}

export function readSampling(area: StateArea, scenario: string): SamplingState | null {
  return area.readDocument<SamplingState>(evidenceDir(area, scenario, 'sampling.json'), SAMPLING_SCHEMA, (v) => {
    const s = v as unknown as SamplingState;
    if (s.scenario !== scenario) fail('DIGEST_MISMATCH', `counts deliveries of scenario ${JSON.stringify(s.scenario)}`);
    return s;
  });
}

export function writeSampling(area: StateArea, s: SamplingState): void {
  area.writer.mkdir(evidenceDir(area, s.scenario));
  area.writer.replaceDocument(evidenceDir(area, s.scenario, 'sampling.json'), SAMPLING_SCHEMA, s);
}
