/**
 * autoctx/bootstrap: the bounded bootstrap package, its delivery receipts
 * and query-time recall, for hosts that embed autoctx. renderPackage is the
 * pure renderer; render, prepare, claim and recall read a knowledge tree
 * (prepare and claim write receipts in its state area, knowledge/.state/).
 */
export {
  render,
  prepare,
  claim,
  type RenderOptions,
  type RenderResult,
  type PrepareOptions,
  type PrepareResult,
  type ClaimOptions,
  type ClaimResult,
} from '../core/delivery/bootstrap.js';
export {
  recall,
  RECALL_MIN_SCORE,
  type RecallOptions,
  type RecallResult,
  type RecalledItem,
} from '../core/delivery/recall.js';
export {
  renderPackage,
  BOOTSTRAP_LIMITS,
  BEGIN_MARKER,
  END_MARKER,
  TRUST_POLICY,
  TRUNCATION_MARK,
  type PackageCandidate,
  type PackageItem,
  type RenderedPackage,
} from '../model/delivery/bootstrap-render.js';
export {isSecretKind, normalizeKind, SECRET_MARKERS} from '../model/delivery/bootstrap-text.js';
export {
  BOOTSTRAP_LIFECYCLES,
  BOOTSTRAP_PACKAGE_SCHEMA,
  BOOTSTRAP_PROFILE,
  RECEIPT_RETENTION_DAYS,
  eventKey,
  requestDigest,
  type BootstrapLifecycle,
  type BootstrapReceipt,
  type PackageReason,
  type PackageStatus,
  type ReceiptState,
} from '../model/delivery/bootstrap-receipt.js';
export {BOOTSTRAP_TAG, CURATION_LIMITS} from '../model/delivery/curation.js';
