import type {PackageItem} from '../delivery/bootstrap-render.js';
import type {BundleComponent} from '../bundle/component.js';

/** What the prompt inspector reports and what it reads (inspector.ts, inspector-bootstrap.ts). Types only. */
export type Verdict = 'PASS' | 'FAIL' | 'INCOMPLETE' | 'NOT_APPLICABLE' | 'ERROR';

export interface Finding {
  code: 'MISMATCH' | 'UNVERIFIABLE';
  /**
   * framing: bytes autoctx's own framing does not account for; cited_item: an
   * item's citation or body; item_list: the items against the receipt that
   * names them; component_delivered, absent_not_delivered: as named.
   */
  check: 'framing' | 'cited_item' | 'item_list' | 'component_delivered' | 'absent_not_delivered';
  subject: string;
  detail: string;
}

/** A delivery receipt as far as the inspector reads it: the package it names and the items it cites, in order. */
export interface ReceiptView {
  scenario?: string;
  package_digest?: string | null;
  items: PackageItem[];
}

export interface InspectorLookup {
  /** A handoff revision's digest and rendered body, or null when the scenario holds none such. */
  handoff(id: string, revision: number): {digest: string; body: string} | null;
  /** A present component of this digest in some stored bundle other than the claimed one, or null. */
  otherComponent(componentDigest: string): BundleComponent | null;
  /** The texts a (kind, key) has in the claimed bundle's parent and in every stored bundle. */
  textsOf(kind: string, key: string): string[];
  /** The delivery receipt stored on this machine under this id, or null (none, pruned, or unreadable). */
  receipt(id: string): ReceiptView | null;
}
