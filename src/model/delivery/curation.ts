import {fail} from '../../errors.js';

/** The tag an operator gives a component to put it in the bootstrap package. */
export const BOOTSTRAP_TAG = 'bootstrap-context';

export const CURATION_LIMITS = {
  /** Tags per scenario; tag add refuses a 33rd. */
  tags: 32,
  /** Context references taken part in a package or a recall, in declared order. */
  referencesConsidered: 8,
  /** References a scenario may declare (only the first eight are considered). */
  references: 32,
  grants: 64,
  /** Handoff documents per scenario. */
  handoffs: 256,
} as const;

/** A component tagged bootstrap-context, by its exact digest; kind and key are what the stored bundles say it is. */
export interface CurationTag {
  component_digest: string;
  kind: string;
  key: string;
}

/** A handoff's latest revision and the digest of that revision's document. */
export interface HandoffHead {
  id: string;
  revision: number;
  document_digest: string;
}

/**
 * A scenario's curation, committed: bootstrap tags in the order they were
 * added (the curated order), the scenarios it refers to, the scenarios it
 * grants read access to, and the head of each handoff.
 */
export interface Curation {
  schema_version: 1;
  scenario: string;
  /** The position of the history entry this state is (1 for the first change). */
  seq: number;
  tags: CurationTag[];
  references: string[];
  grants: string[];
  handoffs: HandoffHead[];
}

export type CurationCause =
  | 'tag-add'
  | 'tag-rm'
  | 'reference-add'
  | 'reference-rm'
  | 'grant-add'
  | 'grant-rm'
  | 'handoff-write'
  | 'repair';

/** One immutable entry of the curation history: the curation as a change left it. */
export interface CurationEntry {
  schema_version: 1;
  scenario: string;
  seq: number;
  previous_entry_sha256: string | null;
  cause: CurationCause;
  written_at: string;
  curation: Curation;
}

/**
 * One immutable revision of a handoff: a JSON object written by a person or an agent, chained to the revision before.
 */
export interface HandoffRevision {
  schema_version: 1;
  scenario: string;
  id: string;
  revision: number;
  previous_document_digest: string | null;
  content: {[key: string]: unknown};
  content_digest: string;
  written_at: string;
}

export function emptyCuration(scenario: string): Curation {
  return {schema_version: 1, scenario, seq: 0, tags: [], references: [], grants: [], handoffs: []};
}

const HANDOFF_ID = /^[A-Za-z0-9._-]{1,120}$/;

export function handoffIdProblem(id: string): string | null {
  if (!HANDOFF_ID.test(id) || id === '.' || id === '..')
    return 'a handoff id is 1 to 120 characters of A-Z, a-z, 0-9, ".", "_" and "-" (not "." or "..")';
  return null;
}

/** Parse "ID@N" into an exact handoff reference (never "the latest"). */
export function parseHandoffRef(text: string): {id: string; revision: number} {
  const at = text.lastIndexOf('@');
  const id = at < 0 ? text : text.slice(0, at);
  const rev = at < 0 ? '' : text.slice(at + 1);
  if (at < 0 || !/^[1-9][0-9]{0,5}$/.test(rev))
    fail('USAGE', `a handoff is named exactly, as ID@REVISION (revision 1 to 999999): got ${JSON.stringify(text)}`);
  const problem = handoffIdProblem(id);
  if (problem) fail('INVALID_NAME', `${JSON.stringify(id)}: ${problem}`);
  return {id, revision: Number(rev)};
}

/**
 * What is wrong with a curation's lists, or null: the rules tag, reference and grant enforce, checked again on read.
 */
export function curationProblem(c: Curation): string | null {
  if (c.tags.length > CURATION_LIMITS.tags) return `${c.tags.length} tags, more than ${CURATION_LIMITS.tags}`;
  const digests = new Set<string>();
  for (const t of c.tags) {
    if (digests.has(t.component_digest)) return `component ${t.component_digest} is tagged twice`;
    digests.add(t.component_digest);
  }
  for (const [name, list, max] of [
    ['references', c.references, CURATION_LIMITS.references],
    ['grants', c.grants, CURATION_LIMITS.grants],
  ] as const) {
    if (list.length > max) return `${list.length} ${name}, more than ${max}`;
    if (new Set(list).size !== list.length) return `${name} repeat a scenario`;
    if (list.includes(c.scenario)) return `${name} name the scenario itself`;
  }
  if (c.handoffs.length > CURATION_LIMITS.handoffs)
    return `${c.handoffs.length} handoffs, more than ${CURATION_LIMITS.handoffs}`;
  for (let i = 0; i < c.handoffs.length; i++) {
    const problem = handoffIdProblem(c.handoffs[i]!.id);
    if (problem) return `handoff ${JSON.stringify(c.handoffs[i]!.id)}: ${problem}`;
    if (i > 0 && c.handoffs[i - 1]!.id >= c.handoffs[i]!.id) return 'handoffs must be sorted by id, without repeats';
  }
  return null;
}
