import {compareUtf16, sha256Hex, stableDigest} from '../../canonical/index.js';
import {fail} from '../../errors.js';
import {componentDigest, createEscapedComponent, type BundleComponent, type ComponentInput} from './component.js';
import {escapeComponent, manifestBodyText, type EscapedComponent} from './component-text.js';
import {isComponentKind} from './kinds.js';
import {isNonPresentState} from './element-state.js';

export const BUNDLE_SCHEMA_VERSION = 1;
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;

/** An immutable context bundle manifest. */
export interface ContextBundle {
  schema_version: 1;
  scenario: string;
  evaluator_epoch: string;
  parent_digest: string | null;
  components: BundleComponent[];
  digest: string;
}

/**
 * What verify keeps of a checked manifest: everything but the component texts, so that a large tree is not held in
 * memory.
 */
export type BundleOutline = Omit<ContextBundle, 'components'> & {components: Array<Omit<BundleComponent, 'content'>>};

export interface BundleInput {
  scenario: string;
  evaluator_epoch: string;
  parent_digest: string | null;
  components: ComponentInput[];
}

export function compareComponents(a: {kind: string; key: string}, b: {kind: string; key: string}): number {
  return compareUtf16(a.kind, b.kind) || compareUtf16(a.key, b.key);
}

/**
 * Digest of the manifest payload; each component's own digest is part of it.
 * `escaped` (in component order) saves escaping each content a second time.
 */
export function bundleDigest(
  b: Omit<ContextBundle, 'digest'>,
  escaped?: ReadonlyArray<EscapedComponent | undefined>,
): string {
  const parts = b.components.map((c, i) => ({escaped: escaped?.[i] ?? escapeComponent(c), digest: c.digest}));
  const states = b.components.some((c) => c.state !== undefined);
  const text =
    !states && parts.every((p) => p.escaped !== undefined && p.digest.isWellFormed())
      ? manifestBodyText(b, parts as Array<{escaped: EscapedComponent; digest: string}>)
      : undefined;
  if (text !== undefined) return sha256Hex(text);
  return stableDigest({
    // A non-present component's state is part of the manifest text, as it is written (a present one has no state key).
    components: b.components.map((c) => ({
      content: c.content,
      digest: c.digest,
      key: c.key,
      kind: c.kind,
      media_type: c.media_type,
      ...(c.state !== undefined ? {state: c.state} : {}),
    })),
    evaluator_epoch: b.evaluator_epoch,
    parent_digest: b.parent_digest,
    scenario: b.scenario,
    schema_version: b.schema_version,
  });
}

function checkHeader(scenario: unknown, epoch: unknown, parent: unknown): void {
  if (typeof scenario !== 'string' || scenario.trim() === '')
    fail('SCHEMA_VIOLATION', 'bundle scenario must be a non-blank string');
  if (typeof epoch !== 'string' || epoch.trim() === '')
    fail('SCHEMA_VIOLATION', 'bundle evaluator_epoch must be a non-blank string');
  if (parent !== null && (typeof parent !== 'string' || !DIGEST_PATTERN.test(parent))) {
    fail('SCHEMA_VIOLATION', 'bundle parent_digest must be null or 64 lowercase hex characters');
  }
}

function checkUnique(components: readonly BundleComponent[]): void {
  for (let i = 1; i < components.length; i++) {
    if (compareComponents(components[i - 1]!, components[i]!) === 0) {
      fail('DUPLICATE_COMPONENT', `duplicate component ${components[i]!.kind}/${components[i]!.key}`);
    }
  }
}

/** Build a bundle from components in any order: they are sorted by (kind, key). */
export function createBundle(input: BundleInput): ContextBundle {
  checkHeader(input.scenario, input.evaluator_epoch, input.parent_digest);
  if (!Array.isArray(input.components)) fail('SCHEMA_VIOLATION', 'bundle components must be an array');
  const built = input.components
    .map(createEscapedComponent)
    .sort((a, b) => compareComponents(a.component, b.component));
  const components = built.map((b) => b.component);
  checkUnique(components);
  const body = {
    schema_version: BUNDLE_SCHEMA_VERSION as 1,
    scenario: input.scenario,
    evaluator_epoch: input.evaluator_epoch,
    parent_digest: input.parent_digest,
    components,
  };
  return {
    ...body,
    digest: bundleDigest(
      body,
      built.map((b) => b.escaped),
    ),
  };
}

const MANIFEST_KEYS = ['components', 'digest', 'evaluator_epoch', 'parent_digest', 'scenario', 'schema_version'];
const COMPONENT_KEYS = ['content', 'digest', 'key', 'kind', 'media_type'];
const STATED_COMPONENT_KEYS = [...COMPONENT_KEYS, 'state'];

function exactKeys(value: object, keys: readonly string[], what: string): void {
  const actual = Object.keys(value).sort();
  const missing = keys.filter((k) => !actual.includes(k));
  const extra = actual.filter((k) => !keys.includes(k));
  if (missing.length > 0 || extra.length > 0) {
    fail(
      'SCHEMA_VIOLATION',
      `invalid shape for ${what}: ` +
        `${[...missing.map((k) => `missing ${k}`), ...extra.map((k) => `unexpected ${k}`)].join(', ')}`,
    );
  }
}

/**
 * Load a serialized manifest strictly: exact keys, components sorted and
 * unique, every component digest present and equal to its content, the
 * manifest digest present and equal.
 */
export function validateBundle(value: unknown): ContextBundle {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    fail('SCHEMA_VIOLATION', 'invalid shape: a manifest must be an object');
  const m = value as Record<string, unknown>;
  exactKeys(m, MANIFEST_KEYS, 'manifest');
  if (m.schema_version !== BUNDLE_SCHEMA_VERSION)
    fail('SCHEMA_VIOLATION', `unsupported manifest schema_version ${String(m.schema_version)}`);
  checkHeader(m.scenario, m.evaluator_epoch, m.parent_digest);
  if (!Array.isArray(m.components)) fail('SCHEMA_VIOLATION', 'invalid shape: manifest components must be an array');
  const escapes: Array<EscapedComponent | undefined> = [];
  const components: BundleComponent[] = m.components.map((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      fail('SCHEMA_VIOLATION', `invalid shape: component ${i} must be an object`);
    const c = raw as Record<string, unknown>;
    exactKeys(c, 'state' in c ? STATED_COMPONENT_KEYS : COMPONENT_KEYS, `component ${i}`);
    if (!isComponentKind(c.kind)) fail('UNKNOWN_KIND', `invalid shape: unknown component kind "${String(c.kind)}"`);
    if (typeof c.digest !== 'string') fail('SCHEMA_VIOLATION', `component ${i} digest must be a string`);
    // A present component is written with no state field: "PRESENT" spelled out is another text of the same bundle,
    // refused.
    if ('state' in c && !isNonPresentState(c.state))
      fail(
        'SCHEMA_VIOLATION',
        `component ${i} state must be ABSENT, UNVERSIONED or INCLUDED (a present component has no state ` +
          `field), not ${JSON.stringify(c.state)}`,
      );
    const {component: built, escaped} = createEscapedComponent({
      kind: c.kind,
      key: c.key as string,
      content: c.content as string,
      media_type: c.media_type as string,
      ...('state' in c ? {state: c.state as string} : {}),
    });
    escapes.push(escaped);
    if (built.digest !== c.digest) {
      fail(
        'DIGEST_MISMATCH',
        `component digest mismatch for ${built.kind}/${built.key}: recorded ${c.digest}, content hashes to ` +
          `${built.digest}`,
      );
    }
    return built;
  });
  for (let i = 1; i < components.length; i++) {
    const order = compareComponents(components[i - 1]!, components[i]!);
    if (order > 0) fail('UNSORTED_COMPONENTS', `manifest components are not sorted by (kind, key) at index ${i}`);
  }
  checkUnique(components);
  if (typeof m.digest !== 'string') fail('SCHEMA_VIOLATION', 'manifest digest must be a string');
  const body = {
    schema_version: BUNDLE_SCHEMA_VERSION as 1,
    scenario: m.scenario as string,
    evaluator_epoch: m.evaluator_epoch as string,
    parent_digest: m.parent_digest as string | null,
    components,
  };
  const digest = bundleDigest(body, escapes);
  if (digest !== m.digest)
    fail('DIGEST_MISMATCH', `manifest digest mismatch: recorded ${m.digest}, manifest hashes to ${digest}`);
  return {...body, digest};
}

/** Find a present component by kind and key (a non-present one is one the bundle lacks, or that the host supplies). */
export function findComponent(bundle: ContextBundle, kind: string, key: string): BundleComponent | undefined {
  return bundle.components.find((c) => c.kind === kind && c.key === key && c.state === undefined);
}

/** Whether a bundle uses element states, which the Python implementation cannot read. */
export function usesElementStates(bundle: {components: ReadonlyArray<{state?: unknown}>}): boolean {
  return bundle.components.some((c) => c.state !== undefined);
}

export {componentDigest};
