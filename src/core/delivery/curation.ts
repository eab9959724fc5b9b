import {jsonEqual, stableDigest, type JsonValue} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {isSecretKind} from '../../model/delivery/bootstrap-text.js';
import {
  CURATION_LIMITS,
  emptyCuration,
  handoffIdProblem,
  parseHandoffRef,
  type Curation,
  type CurationCause,
  type CurationEntry,
  type CurationTag,
  type HandoffRevision,
} from '../../model/delivery/curation.js';
import {isoTimestamp} from '../../model/promotion/records.js';
import {assertScenarioName, readInputJson, type ScenarioStore} from '../../store/index.js';
import {lockTimeout, now, openKnowledge, openScenario, type StoreOptions} from '../common/store-options.js';
import {
  changeCuration,
  currentCuration,
  readCurationEntry,
  settleCuration,
} from '../../store/kinds/delivery/curation.js';
import {readActive} from '../../store/kinds/promotion/active-pointer.js';
import {listBundleDigests, readBundleOutline} from '../../store/kinds/bundle/bundle.js';
import {createHandoff, pendingRevision, readHandoff, readHead} from '../../store/kinds/delivery/handoff.js';

const DIGEST = /^[0-9a-f]{64}$/;
/** A handoff's content is small by design: it is quoted into a package of at most 8 KiB. */
export const HANDOFF_MAX_BYTES = 65536;

export interface TagResult {
  status: 'tagged' | 'untagged' | 'unchanged';
  scenario: string;
  tag: CurationTag;
  tags: number;
}

/**
 * The last change the curation records, with the curation before it, when
 * it has `cause`: a command run again after a crash (or straight after
 * itself) finds its own change already made and answers as it did.
 */
function lastChange(
  store: ScenarioStore,
  current: Curation,
  completed: CurationEntry | null,
  cause: CurationCause,
): {before: Curation} | null {
  const last = completed ?? (current.seq > 0 ? readCurationEntry(store, current.seq) : null);
  if (last?.cause !== cause) return null;
  return {
    before: (last.seq > 1 ? readCurationEntry(store, last.seq - 1)?.curation : null) ?? emptyCuration(store.scenario),
  };
}

/** Find a component by exact digest in the scenario's stored bundles, the active one first. */
function findComponent(store: ScenarioStore, digest: string): CurationTag | null {
  const active = readActive(store)?.bundle_digest;
  const order = listBundleDigests(store);
  for (const b of active !== undefined ? [active, ...order.filter((d) => d !== active)] : order) {
    // a non-present component is never tagged
    const c = readBundleOutline(store, b)?.components.find((x) => x.digest === digest && x.state === undefined);
    if (c) return {component_digest: digest, kind: c.kind, key: c.key};
  }
  return null;
}

/** The component digest as given, read in lower case (hex is case-free). */
function componentDigest(given: string): string {
  const digest = given.toLowerCase();
  if (!DIGEST.test(digest))
    fail(
      'INVALID_DIGEST',
      `a component is tagged by its exact digest, 64 hex characters: got ${JSON.stringify(given)}`,
    );
  return digest;
}

/**
 * Tag a component bootstrap-context by its exact digest, which some stored bundle of the scenario must hold; at most
 * 32.
 */
export async function tagAdd(given: StoreOptions & {digest: string}): Promise<TagResult> {
  const options = {...given, digest: componentDigest(given.digest)};
  const store = openScenario(options);
  const tag = findComponent(store, options.digest);
  if (!tag)
    fail('COMPONENT_NOT_FOUND', `no stored bundle of scenario "${store.scenario}" holds component ${options.digest}`, {
      scenario: store.scenario,
    });
  return store.withLock(lockTimeout(options), () => {
    const current = settleCuration(store).curation;
    if (current.tags.some((t) => t.component_digest === tag.component_digest))
      return {status: 'unchanged' as const, scenario: store.scenario, tag, tags: current.tags.length};
    if (current.tags.length >= CURATION_LIMITS.tags)
      fail(
        'TAG_LIMIT',
        `scenario "${store.scenario}" already has ${CURATION_LIMITS.tags} ` +
          `bootstrap tags, the most it may have; remove one first (autoctx tag rm)`,
      );
    const next = changeCuration(store, (c) => ({...c, tags: [...c.tags, tag]}), 'tag-add', isoTimestamp(now(options)));
    return {status: 'tagged' as const, scenario: store.scenario, tag, tags: next.tags.length};
  });
}

export async function tagRm(given: StoreOptions & {digest: string}): Promise<TagResult> {
  const options = {...given, digest: componentDigest(given.digest)};
  const store = openScenario(options);
  return store.withLock(lockTimeout(options), () => {
    const {curation: current, completed} = settleCuration(store);
    const tag = current.tags.find((t) => t.component_digest === options.digest);
    // The same removal, cut short after its history entry and completed just now: done, as an uninterrupted run.
    const removed = tag
      ? undefined
      : lastChange(store, current, completed, 'tag-rm')?.before.tags.find((t) => t.component_digest === options.digest);
    if (removed)
      return {status: 'untagged' as const, scenario: store.scenario, tag: removed, tags: current.tags.length};
    if (!tag)
      fail(
        'COMPONENT_NOT_FOUND',
        `component ${options.digest} is not tagged in scenario "${store.scenario}" (autoctx tag list shows the tags)`,
        {scenario: store.scenario},
      );
    const next = changeCuration(
      store,
      (c) => ({...c, tags: c.tags.filter((t) => t !== tag && t.component_digest !== tag.component_digest)}),
      'tag-rm',
      isoTimestamp(now(options)),
    );
    return {status: 'untagged' as const, scenario: store.scenario, tag, tags: next.tags.length};
  });
}

export interface TagListResult {
  status: 'ok';
  scenario: string;
  tags: Array<CurationTag & {serving: boolean; secret: boolean}>;
}

/**
 * The tags in curated order, each with whether the serving bundle holds it and whether its kind is excluded as secret.
 */
export function tagList(options: StoreOptions): TagListResult {
  const store = openScenario(options);
  const active = readActive(store);
  const digests = new Set(
    active ? (readBundleOutline(store, active.bundle_digest)?.components ?? []).map((c) => c.digest) : [],
  );
  const tags = currentCuration(store).tags.map((t) => ({
    ...t,
    serving: digests.has(t.component_digest),
    secret: isSecretKind(t.kind, t.key),
  }));
  return {status: 'ok', scenario: store.scenario, tags};
}

export interface ScopeResult {
  status: 'updated';
  scenario: string;
  references: string[];
  grants: string[];
}

type ScopeList = 'references' | 'grants';

/** Add a scenario to this one's references or grants (refusing itself; a repeat changes nothing), or remove it. */
async function changeScope(
  options: StoreOptions & {name: string},
  list: ScopeList,
  op: 'add' | 'rm',
): Promise<ScopeResult> {
  assertScenarioName(options.name);
  const store = openScenario(options);
  if (options.name === store.scenario)
    fail('INVALID_INPUT', `scenario "${store.scenario}" cannot ${list === 'references' ? 'refer to' : 'grant'} itself`);
  const result = (c: Curation, status: ScopeResult['status']): ScopeResult => ({
    status,
    scenario: store.scenario,
    references: c.references,
    grants: c.grants,
  });
  return store.withLock(lockTimeout(options), () => {
    const {curation: current, completed} = settleCuration(store);
    const has = current[list].includes(options.name);
    if (has === (op === 'add')) {
      // The same change, cut short after its history entry and completed now (or just made): done, as an uninterrupted
      // run.
      const last = lastChange(store, current, completed, `${list === 'references' ? 'reference' : 'grant'}-${op}`);
      if (last && last.before[list].includes(options.name) === (op === 'rm')) return result(current, 'updated');
      if (op === 'rm')
        fail(
          'INVALID_INPUT',
          `scenario "${store.scenario}" has no ` +
            `${list === 'references' ? 'reference to' : 'grant for'} "${options.name}"`,
        );
      fail(
        'INVALID_INPUT',
        `scenario "${store.scenario}" already ${list === 'references' ? 'refers to' : 'grants'} ` +
          `"${options.name}" (a scenario is named once)`,
      );
    }
    const max = list === 'references' ? CURATION_LIMITS.references : CURATION_LIMITS.grants;
    if (op === 'add' && current[list].length >= max)
      fail('INVALID_INPUT', `scenario "${store.scenario}" already has ${max} ${list}, the most it may have`);
    const next = changeCuration(
      store,
      (c) => ({...c, [list]: op === 'add' ? [...c[list], options.name] : c[list].filter((n) => n !== options.name)}),
      `${list === 'references' ? 'reference' : 'grant'}-${op}`,
      isoTimestamp(now(options)),
    );
    return result(next, 'updated');
  });
}

export const referenceAdd = (o: StoreOptions & {name: string}) => changeScope(o, 'references', 'add');
export const referenceRm = (o: StoreOptions & {name: string}) => changeScope(o, 'references', 'rm');
export const grantAdd = (o: StoreOptions & {name: string}) => changeScope(o, 'grants', 'add');
export const grantRm = (o: StoreOptions & {name: string}) => changeScope(o, 'grants', 'rm');

export interface ReferenceListResult {
  status: 'ok';
  scenario: string;
  references: Array<{scenario: string; standing: 'participating' | 'missing' | 'ungranted' | 'beyond_limit'}>;
  grants: string[];
}

/** The references in declared order, each with its standing, and the grants. */
export function referenceList(options: StoreOptions): ReferenceListResult {
  const knowledge = openKnowledge(options);
  const scenario = knowledge.resolveScenario(options.scenario);
  const curation = currentCuration(knowledge.scenario(scenario));
  const known = new Set(knowledge.listScenarios());
  const references = curation.references.map((name, i) => {
    if (i >= CURATION_LIMITS.referencesConsidered) return {scenario: name, standing: 'beyond_limit' as const};
    if (!known.has(name)) return {scenario: name, standing: 'missing' as const};
    const other = knowledge.scenario(name);
    if (!currentCuration(other).grants.includes(scenario)) return {scenario: name, standing: 'ungranted' as const};
    return {scenario: name, standing: readActive(other) ? ('participating' as const) : ('missing' as const)};
  });
  return {status: 'ok', scenario, references, grants: curation.grants};
}

export interface HandoffWriteResult {
  status: 'written' | 'unchanged';
  scenario: string;
  id: string;
  revision: number;
  content_digest: string;
}

function handoffContent(file: string): {[key: string]: JsonValue} {
  const value = readInputJson(file);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('INVALID_INPUT', `${file}: a handoff is a JSON object`, {file});
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > HANDOFF_MAX_BYTES)
    fail('INPUT_TOO_LARGE', `${file}: a handoff is at most ${HANDOFF_MAX_BYTES} bytes of JSON, this one ${bytes}`, {
      file,
    });
  return value as {[key: string]: JsonValue};
}

/** Write the next revision of a handoff from a JSON object; the same content as the latest revision writes nothing. */
export async function handoffWrite(options: StoreOptions & {id: string; from: string}): Promise<HandoffWriteResult> {
  const problem = handoffIdProblem(options.id);
  if (problem) fail('INVALID_NAME', `${JSON.stringify(options.id)}: ${problem}`);
  const content = handoffContent(options.from);
  const digest = stableDigest(content);
  const store = openScenario(options);
  return store.withLock(lockTimeout(options), () => {
    const at = isoTimestamp(now(options));
    let curation = settleCuration(store).curation;
    // A write cut short after its revision and before its curation entry: completed first.
    const pending = pendingRevision(store, curation, options.id);
    if (pending) curation = indexHandoff(store, pending, at);
    const head = curation.handoffs.find((h) => h.id === options.id);
    const latest = head ? readHead(store, head) : null;
    // The next revision chains only to the head the curation vouches for.
    if (head && (!latest || stableDigest(latest) !== head.document_digest)) {
      const file = store.guard.relative(store.paths.handoffRevision(options.id, head.document_digest));
      fail(
        'INTEGRITY',
        `${file} is missing or is not the revision curation.json ` +
          `names as the head of ${options.id}; run autoctx verify`,
        {file},
      );
    }
    const done = (status: HandoffWriteResult['status'], revision: number) => ({
      status,
      scenario: store.scenario,
      id: options.id,
      revision,
      content_digest: digest,
    });
    if (latest && latest.content_digest === digest && jsonEqual(latest.content, content))
      return done('unchanged', latest.revision);
    if (!head && curation.handoffs.length >= CURATION_LIMITS.handoffs)
      fail(
        'INVALID_INPUT',
        `scenario "${store.scenario}" already has ${CURATION_LIMITS.handoffs} handoffs, the most it may have`,
      );
    const revision = (head?.revision ?? 0) + 1;
    const doc: HandoffRevision = {
      schema_version: 1,
      scenario: store.scenario,
      id: options.id,
      revision,
      previous_document_digest: latest ? stableDigest(latest) : null,
      content,
      content_digest: digest,
      written_at: at,
    };
    createHandoff(store, doc);
    indexHandoff(store, doc, at);
    return done('written', revision);
  });
}

/** Record a handoff revision as its head in the curation. */
export function indexHandoff(store: ScenarioStore, doc: HandoffRevision, at: string): Curation {
  const head = {id: doc.id, revision: doc.revision, document_digest: stableDigest(doc)};
  return changeCuration(
    store,
    (c) => ({
      ...c,
      handoffs: [...c.handoffs.filter((h) => h.id !== doc.id), head].sort((a, b) =>
        a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
      ),
    }),
    'handoff-write',
    at,
  );
}

export interface HandoffShowResult {
  status: 'ok';
  scenario: string;
  handoff: HandoffRevision;
  latest_revision: number;
}

/** One exact revision, "ID@N". */
export function handoffShow(options: StoreOptions & {ref: string}): HandoffShowResult {
  const ref = parseHandoffRef(options.ref);
  const store = openScenario(options);
  const head = currentCuration(store).handoffs.find((h) => h.id === ref.id);
  const doc = head && ref.revision <= head.revision ? readHandoff(store, ref.id, ref.revision) : null;
  if (!head || !doc)
    fail(
      'HANDOFF_NOT_FOUND',
      `scenario "${store.scenario}" has no handoff ` +
        `${ref.id}@${ref.revision}${head ? ` (${ref.id} has revisions 1 to ${head.revision})` : ''}`,
      {scenario: store.scenario},
    );
  return {status: 'ok', scenario: store.scenario, handoff: doc, latest_revision: head.revision};
}
