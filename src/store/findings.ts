import type {Dirent} from 'node:fs';
import {
  isAutoctxError,
  rethrowUnless,
  type AutoctxError,
  type ErrorCode,
  type VerifyErrorFinding,
  type VerifyNoteFinding,
  type VerifyWarningFinding,
} from '../errors.js';
import type {JsonValue} from '../canonical/index.js';
import type {BundleOutline, ContextBundle} from '../model/bundle/bundle.js';
import type {ActivePointer} from '../model/promotion/records.js';
import type {KindContext} from './kinds/common/kind-context.js';
import type {TreeEntry} from './files/tree-walk.js';
import {checkoutDamageOf} from './files/checkout-damage.js';
import type {SchemaName} from './schemas.js';
import {confirmationPolicyDigest, type ConfirmationPolicy} from '../model/evaluation/policy.js';

export interface VerifyIssue {
  severity: 'error' | 'warning' | 'note';
  code: string;
  file: string;
  message: string;
}

/** The lengths of the three lists of findings at one moment. */
export interface Mark {
  errors: number;
  warnings: number;
  notes: number;
}

/**
 * What the document kinds' checks read through `Findings.store`: a part of
 * the scenario store, named structurally so that this module imports no
 * store module that imports the kinds (they import this one). The checks in
 * the core see the whole store (`ScenarioFindings`, store/scenario-findings.ts).
 */
export interface CheckedStore extends KindContext {
  walk(listings?: Map<string, Dirent[]>): TreeEntry[];
  linkStaysInside(file: string): boolean;
}

/**
 * What verify found in one scenario: the document kinds' checks report here,
 * and every check runs even after a failure. It collects; it never prints.
 */
export class Findings<S extends CheckedStore = CheckedStore> {
  readonly errors: VerifyIssue[] = [];
  readonly warnings: VerifyIssue[] = [];
  /**
   * What verify accepted on weaker grounds than its own records (a tree another implementation wrote), said plainly.
   */
  readonly notes: VerifyIssue[] = [];
  /** The outlines of the manifests that verified, by digest. */
  readonly bundles = new Map<string, BundleOutline>();
  /** The head of the scenario's signed state chain (null: not signed, or no chain), for an anchor to pin. */
  chainHead: string | null = null;

  constructor(
    readonly store: S,
    readonly replayTolerance = false,
    /** The time verify judges by (emergency rollbacks' approval windows), and the window in days. */
    readonly at: Date = new Date(),
    readonly approvalWindowDays = 7,
    /** The allowed signers anchor given to verify (never taken from the tree), or null. */
    readonly anchor: string | null = null,
  ) {}

  rel(file: string): string {
    const rel = this.store.guard.relative(file);
    return rel === '.' ? '' : rel;
  }

  private tree: TreeEntry[] | undefined;

  /** The scenario's entries, walked once per verify; later reads of files the walk did not find touch no disk. */
  entries(): TreeEntry[] {
    if (!this.tree) {
      const listings = new Map<string, Dirent[]>();
      this.tree = this.store.walk(listings);
      this.store.guard.useSnapshot(this.store.paths.dir, this.tree, listings);
    }
    return this.tree;
  }

  error(file: string, code: VerifyErrorFinding | ErrorCode, message: string): void {
    const damage = code === 'LINE_ENDINGS' || code === 'MERGE_CONFLICT' ? {code, message} : this.damageOf(file);
    if (damage === null) {
      this.errors.push({severity: 'error', code, file: this.rel(file), message});
      return;
    }
    // What a checkout or a merge did to the file, said once, in place of every fault it explains.
    const rel = this.rel(file);
    if (!this.errors.some((e) => e.file === rel && e.code === damage.code))
      this.errors.push({severity: 'error', code: damage.code, file: rel, message: damage.message});
  }

  private readonly damage = new Map<string, AutoctxError | null>();

  /** LINE_ENDINGS or MERGE_CONFLICT for a file a checkout converted or a merge left markers in (checkout-damage.ts). */
  private damageOf(file: string): AutoctxError | null {
    let found = this.damage.get(file);
    if (found === undefined) this.damage.set(file, (found = checkoutDamageOf(this.store.guard, file)));
    return found;
  }

  warn(file: string, code: VerifyWarningFinding, message: string): void {
    this.warnings.push({severity: 'warning', code, file: this.rel(file), message});
  }

  note(file: string, code: VerifyNoteFinding, message: string): void {
    this.notes.push({severity: 'note', code, file: this.rel(file), message});
  }

  /** The files a check found (read, or refused); a file read by several checks counts once. */
  private readonly checked = new Set<string>();

  get filesChecked(): number {
    return this.checked.size;
  }

  /** Run a read (or a check of a file's content); a typed failure becomes an error entry and the result undefined. */
  attempt<T>(file: string, fn: () => T): T | undefined {
    try {
      const result = fn();
      if (result !== null) this.checked.add(file); // null: the file does not exist
      return result;
    } catch (error) {
      this.checked.add(file);
      rethrowUnless(error, isAutoctxError);
      const message = error.message.startsWith(this.rel(file)) ? error.message : `${this.rel(file)}: ${error.message}`;
      this.error(file, (error.data?.reason as ErrorCode | undefined) ?? error.code, message); // the reader's own code
      return undefined;
    }
  }

  bundle(digest: string | null | undefined): BundleOutline | undefined {
    if (!digest) return undefined;
    return this.bundles.get(digest) ?? this.outlines?.(digest);
  }

  private outlines: ((digest: string) => BundleOutline | undefined) | undefined;

  /**
   * Answer bundle() from `source` until `fn` returns (manifests checked when
   * first asked for, before their own findings are recorded), then as before.
   */
  withOutlines(source: (digest: string) => BundleOutline | undefined, fn: () => void): void {
    this.outlines = source;
    try {
      fn();
    } finally {
      this.outlines = undefined;
    }
  }

  /** Where the findings stand now, for arrange and reportBefore. */
  mark(): Mark {
    return {errors: this.errors.length, warnings: this.warnings.length, notes: this.notes.length};
  }

  /**
   * Put what was reported since `mark` in the order of `blocks`: the findings
   * of each of several checks run in another order, each between its two
   * marks, with nothing reported outside them.
   */
  arrange(mark: Mark, blocks: ReadonlyArray<readonly [Mark, Mark] | undefined>): void {
    const order = (list: VerifyIssue[], key: keyof Mark) => {
      const since = list.splice(mark[key]);
      for (const block of blocks)
        if (block) for (let k = block[0][key]; k < block[1][key]; k++) list.push(since[k - mark[key]]!);
    };
    order(this.errors, 'errors');
    order(this.warnings, 'warnings');
    order(this.notes, 'notes');
  }

  /** Run `fn`, and put what it reports at `mark`, before what was reported since: as if it had run then. */
  reportBefore(mark: Mark, fn: () => void): void {
    const end = this.mark();
    fn();
    this.arrange(mark, [
      [end, this.mark()],
      [mark, end],
    ]);
  }

  /** Report one problem against both files it sets against each other. */
  both(a: string, b: string, code: VerifyErrorFinding | ErrorCode, message: string): void {
    this.error(a, code, message);
    this.error(b, code, message);
  }
}

/** A confirmation policy and its digest must be both present (and agree) or both null. */
export function checkPolicy(
  c: Findings,
  file: string,
  policy: ConfirmationPolicy | null | undefined,
  digest: string | null | undefined,
): void {
  if (policy == null && digest == null) return;
  if (policy == null || digest == null)
    return c.error(
      file,
      'DIGEST_MISMATCH',
      `${c.rel(file)}: confirmation policy and its digest must be both present or both null`,
    );
  if (confirmationPolicyDigest(policy) !== digest)
    c.error(file, 'DIGEST_MISMATCH', `${c.rel(file)}: confirmation_policy_digest does not match the policy`);
}
