import {LARGE_STRING} from '../../canonical/index.js';

/**
 * Canonical JSON of components and manifests, written by hand so that each
 * component's content is escaped once and that one escape serves both the
 * component digest and the manifest digest (canonical JSON of the generic
 * encoder, byte for byte; test/canonical/component-text.test.ts checks it).
 * Returns undefined when the generic encoder must decide: a string with a lone
 * surrogate (it names the problem) or a content long enough to be hashed in pieces.
 */
export interface EscapedComponent {
  /** JSON.stringify(content): the content's canonical spelling. */
  content: string;
  key: string;
  kind: string;
  media_type: string;
}

function plain(value: string): boolean {
  return value.length <= LARGE_STRING && value.isWellFormed();
}

export function escapeComponent(c: {
  content: string;
  key: string;
  kind: string;
  media_type: string;
}): EscapedComponent | undefined {
  if (!plain(c.content) || !plain(c.key) || !plain(c.kind) || !plain(c.media_type)) return undefined;
  return {
    content: JSON.stringify(c.content),
    key: JSON.stringify(c.key),
    kind: JSON.stringify(c.kind),
    media_type: JSON.stringify(c.media_type),
  };
}

/** canonicalJson({content, key, kind, media_type}). */
export function componentBodyText(e: EscapedComponent): string {
  return `{"content":${e.content},"key":${e.key},"kind":${e.kind},"media_type":${e.media_type}}`;
}

/** canonicalJson of a manifest payload whose components carry the given digests. */
export function manifestBodyText(
  header: {scenario: string; evaluator_epoch: string; parent_digest: string | null; schema_version: number},
  components: ReadonlyArray<{escaped: EscapedComponent; digest: string}>,
): string | undefined {
  const {scenario, evaluator_epoch: epoch, parent_digest: parent, schema_version: version} = header;
  if (!plain(scenario) || !plain(epoch) || (parent !== null && !plain(parent)) || !Number.isSafeInteger(version))
    return undefined;
  const parts = components.map(
    ({escaped: e, digest}) =>
      `{"content":${e.content},"digest":${JSON.stringify(digest)},"key":${e.key},"kind":${e.kind},"media_ty` +
      `pe":${e.media_type}}`,
  );
  return (
    `{"components":[${parts.join(',')}],"evaluator_epoch":${JSON.stringify(epoch)},"parent_digest":` +
    `${parent === null ? 'null' : JSON.stringify(parent)},"scenario":${JSON.stringify(scenario)},"schema_` +
    `version":${version}}`
  );
}
