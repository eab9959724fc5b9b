import {jsonEqual, parseJson} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {findComponent, type ContextBundle} from './bundle.js';

const LIVE_KEYS = [
  'model_competitor',
  'model_analyst',
  'model_coach',
  'model_architect',
  'structural_role_isolation',
  'harness_validators_enabled',
];
const CONSTRUCTION_BOUND_KEYS = ['agent_provider', 'judge_provider', 'judge_model'];
const DEFERRED_KEYS = ['dag_changes', 'tuning_proposal'];
const ALLOWED = new Set([...LIVE_KEYS, ...CONSTRUCTION_BOUND_KEYS, ...DEFERRED_KEYS]);

function roles(bundle: ContextBundle): Record<string, unknown> | undefined {
  const c = findComponent(bundle, 'routing_config', 'roles');
  if (!c) return undefined;
  if (c.media_type !== 'application/json')
    fail('NOT_SERVEABLE', 'routing_config/roles must have media type application/json');
  const value = parseJson(c.content);
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('NOT_SERVEABLE', 'routing_config/roles must be a JSON object');
  return value as Record<string, unknown>;
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v !== null && typeof v === 'object') return Object.keys(v).length > 0;
  return Boolean(v);
}

/**
 * The static serveability contract of routing_config/roles: known keys only,
 * no DAG or tuning changes, and no change of a construction-bound field
 * against the incumbent.
 */
export function checkServeable(bundle: ContextBundle, incumbent: ContextBundle | null): void {
  const r = roles(bundle);
  if (!r) return;
  const unknown = Object.keys(r)
    .filter((k) => !ALLOWED.has(k))
    .sort();
  if (unknown.length > 0) fail('NOT_SERVEABLE', `routing_config/roles has unsupported keys: ${unknown.join(', ')}`);
  for (const k of DEFERRED_KEYS) {
    if (truthy(r[k]))
      fail('NOT_SERVEABLE', `routing_config/roles ${k} requires lifecycle reconstruction and cannot be served`);
  }
  if (!incumbent) return;
  const before = roles(incumbent) ?? {};
  for (const k of CONSTRUCTION_BOUND_KEYS) {
    if (!jsonEqual(r[k] ?? null, before[k] ?? null)) {
      fail('NOT_SERVEABLE', `routing_config/roles changes construction-bound field ${k}`);
    }
  }
}
