import {checkRequest} from '../release/route.js';
import type {Serving} from '../../model/release/routing.js';
import MiniSearch from 'minisearch';
import {compareUtf16} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {renderPackage, type PackageItem} from '../../model/delivery/bootstrap-render.js';
import {isSecretKind} from '../../model/delivery/bootstrap-text.js';
import type {BundleComponent} from '../../model/bundle/component.js';
import {deliveredReceipt, maxBytesOf} from './bootstrap.js';
import {servingOf} from './bootstrap-render.js';
import {componentCandidate, participants, type ReferenceCounts} from './bootstrap-select.js';
import {now, openKnowledge, type StoreOptions} from '../common/store-options.js';

/**
 * The sufficiency rule: recall is sufficient when at least one component
 * scores at least this (MiniSearch's BM25+, key matches boosted twice). A
 * term found in nearly every component scores well under it; one that
 * singles out a few components scores above it.
 */
export const RECALL_MIN_SCORE = 1;
export const RECALL_QUERY_MAX = 8192;

export interface RecallOptions extends StoreOptions {
  query: string;
  /** A bootstrap receipt: its fully delivered components are not recalled again. */
  receipt?: string | undefined;
  maxBytes?: number | undefined;
  /** Who the session is for routing (see bootstrap render), and the bundle it was pinned to. */
  user?: string | undefined;
  session?: string | undefined;
  pinned?: Serving | null | undefined;
  /** An exact bundle to recall from, routing bypassed (see bootstrap render's `bundle`). */
  bundle?: string | undefined;
  /**
   * What the session start delivered when there is no receipt to read (a pinned evaluation session keeps none): its
   * components delivered whole are not recalled again, as a receipt's would not be.
   */
  delivered?: readonly PackageItem[] | undefined;
}

export type RecalledItem = PackageItem & {score: number};

export interface RecallResult {
  status: 'ready' | 'insufficient' | 'empty';
  scenario: string;
  sufficient: boolean;
  min_score: number;
  best_score: number | null;
  content: string | null;
  content_bytes: number;
  package_digest: string | null;
  items: RecalledItem[];
  truncated: boolean;
  omitted: number;
  /** Matches dropped because the receipt shows them fully delivered. */
  deduplicated: number;
  receipt_used: boolean;
  references: ReferenceCounts;
  /** The bundle recalled from: the session's pinned one when given (the hooks pass it), else routing's pick. */
  routing: Serving;
}

interface Doc {
  id: number;
  scenario: string;
  component: BundleComponent;
}

/**
 * Query-time recall over every component of the serving bundles of the
 * scenario and its granted references, secret kinds excluded, ranked by
 * MiniSearch with ties broken by (scenario, kind, key). Given an injected
 * receipt of this scenario, the exact components it delivered whole are
 * dropped first, before any limit and before the sufficiency rule; a
 * receipt that is absent, stale, foreign or not injected is ignored.
 */
export function recall(options: RecallOptions): RecallResult {
  const query = options.query;
  if (typeof query !== 'string' || query.trim() === '' || query.length > RECALL_QUERY_MAX)
    fail('USAGE', `--query must be non-blank text of at most ${RECALL_QUERY_MAX} characters`);
  const maxBytes = maxBytesOf(options.maxBytes);
  const who = checkRequest({user: options.user, session: options.session});
  const knowledge = openKnowledge(options);
  const scenario = knowledge.resolveScenario(options.scenario);
  const receipt = deliveredReceipt(knowledge, scenario, options.receipt, now(options));
  const delivered = new Set(
    (receipt?.items ?? options.delivered ?? [])
      .filter((i) => i.kind === 'component' && !i.truncated)
      .map((i) => `${i.scenario}\0${i.component_digest}`),
  );
  const routing = servingOf(knowledge, scenario, options, who);
  const {participants: list, references} = participants(knowledge, scenario, routing.bundle_digest);
  const docs: Doc[] = [];
  for (const p of list)
    for (const component of p.components)
      if (!isSecretKind(component.kind, component.key)) docs.push({id: docs.length, scenario: p.scenario, component});
  const index = new MiniSearch<{id: number; content: string; key: string; kind: string}>({
    fields: ['content', 'key', 'kind'],
    storeFields: [],
  });
  index.addAll(
    docs.map((d) => ({id: d.id, content: d.component.content, key: d.component.key, kind: d.component.kind})),
  );
  let deduplicated = 0;
  const ranked = index
    .search(query, {boost: {key: 2}, combineWith: 'OR'})
    .map((hit) => ({doc: docs[hit.id as number]!, score: hit.score}))
    .filter(({doc}) => {
      const drop = delivered.has(`${doc.scenario}\0${doc.component.digest}`);
      if (drop) deduplicated++;
      return !drop;
    })
    .sort(
      (a, b) =>
        b.score - a.score ||
        compareUtf16(a.doc.scenario, b.doc.scenario) ||
        compareUtf16(a.doc.component.kind, b.doc.component.kind) ||
        compareUtf16(a.doc.component.key, b.doc.component.key),
    );
  const best = ranked[0]?.score ?? null;
  const sufficient = best !== null && best >= RECALL_MIN_SCORE;
  const base = {
    scenario,
    sufficient,
    min_score: RECALL_MIN_SCORE,
    best_score: best,
    deduplicated,
    receipt_used: receipt !== null,
    references,
    routing,
  };
  if (!sufficient)
    return {
      ...base,
      status: best === null ? 'empty' : 'insufficient',
      content: null,
      content_bytes: 0,
      package_digest: null,
      items: [],
      truncated: false,
      omitted: 0,
    };
  const eligible = ranked.filter((r) => r.score >= RECALL_MIN_SCORE);
  const rendered = renderPackage(
    eligible.map((r) => componentCandidate(r.doc.scenario, r.doc.component)),
    {maxBytes, title: 'recall'},
  );
  const scores = new Map(eligible.map((r) => [`${r.doc.scenario}\0${r.doc.component.digest}`, r.score]));
  const items = rendered.items.map((i) => ({...i, score: scores.get(`${i.scenario}\0${i.component_digest}`)!}));
  return {
    ...base,
    status: rendered.content === null ? 'empty' : 'ready',
    content: rendered.content,
    content_bytes: rendered.content_bytes,
    package_digest: rendered.package_digest,
    items,
    truncated: rendered.truncated,
    omitted: rendered.omitted,
    ...(rendered.content === null ? {sufficient: false} : {}),
  };
}
