import {fail} from '../../errors.js';
import {
  BOOTSTRAP_LIMITS,
  maxBytesProblem,
  renderPackage,
  type RenderedPackage,
} from '../../model/delivery/bootstrap-render.js';
import {BOOTSTRAP_PACKAGE_SCHEMA, BOOTSTRAP_PROFILE} from '../../model/delivery/bootstrap-receipt.js';
import {parseHandoffRef} from '../../model/delivery/curation.js';
import {participants, selectCandidates, type ReferenceCounts} from './bootstrap-select.js';
import {openKnowledge, type StoreOptions} from '../common/store-options.js';
import {checkRequest, servingFor} from '../release/route.js';
import type {Serving} from '../../model/release/routing.js';
import type {KnowledgeStore} from '../../store/index.js';
import {readBundle} from '../../store/kinds/bundle/bundle.js';

export interface RenderOptions extends StoreOptions {
  /** An exact handoff, "ID@N". */
  handoff?: string | undefined;
  maxBytes?: number | undefined;
  /** Who the session is for routing: the user if known, else the session id (neither: the scope's ACTIVE). */
  user?: string | undefined;
  session?: string | undefined;
  /** The bundle this session was pinned to by an earlier delivery (hooks). */
  pinned?: Serving | null | undefined;
  /**
   * An exact bundle to render from, routing bypassed (an evaluation's arm, `AUTOCTX_HOOK_BUNDLE`): the store must hold
   * it, or the render fails (never another bundle in its place).
   */
  bundle?: string | undefined;
}

export interface RenderResult extends RenderedPackage {
  status: 'ready' | 'empty';
  schema: typeof BOOTSTRAP_PACKAGE_SCHEMA;
  profile: typeof BOOTSTRAP_PROFILE;
  scenario: string;
  references: ReferenceCounts;
  /** The bundle the package was rendered from (null: nothing was rendered, as for a disabled request). */
  routing: Serving | null;
}

/** The byte limit asked for, or the default; anything else is USAGE (exit 2). */
export function maxBytesOf(value: number | undefined): number {
  const n = value ?? BOOTSTRAP_LIMITS.defaultBytes;
  const problem = maxBytesProblem(n);
  if (problem) fail('USAGE', problem);
  return n;
}

export function packageFields(
  scenario: string,
  rendered: RenderedPackage,
  references: ReferenceCounts,
  routing: Serving | null,
): Omit<RenderResult, 'status'> {
  const {content, content_bytes, package_digest, items, truncated, omitted} = rendered;
  return {
    schema: BOOTSTRAP_PACKAGE_SCHEMA,
    profile: BOOTSTRAP_PROFILE,
    scenario,
    content,
    content_bytes,
    package_digest,
    items,
    truncated,
    omitted,
    references,
    routing,
  };
}

export const NO_REFERENCES: ReferenceCounts = {declared: 0, considered: 0, participating: 0, missing: 0, ungranted: 0};

/**
 * The bundle a delivery renders from: the exact one asked for (an evaluation's arm: served as if it were active, and
 * it must be stored), else the session's pin or routing's pick.
 */
export function servingOf(
  knowledge: KnowledgeStore,
  scenario: string,
  options: {bundle?: string | undefined; pinned?: Serving | null | undefined},
  who: {user?: string | undefined; session?: string | undefined},
): Serving {
  if (options.bundle === undefined) return servingFor(knowledge.scenario(scenario), {...who, pinned: options.pinned});
  if (!/^[0-9a-f]{64}$/.test(options.bundle)) fail('INVALID_DIGEST', 'a pinned bundle is named by its 64-hex digest');
  if (!readBundle(knowledge.scenario(scenario), options.bundle))
    fail('DIGEST_NOT_FOUND', `scenario "${scenario}" holds no bundle ${options.bundle}`, {scenario});
  return {bundle_digest: options.bundle, version: null, state: 'ACTIVE', reason: 'pinned'};
}

/** The package for a scenario as it stands: pure, writes nothing. */
export function render(options: RenderOptions): RenderResult {
  const maxBytes = maxBytesOf(options.maxBytes);
  const handoff = options.handoff !== undefined ? parseHandoffRef(options.handoff) : null;
  const who = checkRequest({user: options.user, session: options.session});
  const knowledge = openKnowledge(options);
  const scenario = knowledge.resolveScenario(options.scenario);
  const routing = servingOf(knowledge, scenario, options, who);
  const {participants: list, references} = participants(knowledge, scenario, routing.bundle_digest);
  const rendered = renderPackage(selectCandidates(list, handoff), {maxBytes});
  return {
    status: rendered.content === null ? 'empty' : 'ready',
    ...packageFields(scenario, rendered, references, routing),
  };
}
