import type {CandidateRecord, ComparisonResult} from '../../../model/promotion/records.js';

/** Lifecycle a comparison leaves the record in, as the reference maps it. */
export function lifecycleFor(
  decision: ComparisonResult['decision'],
  current: CandidateRecord['lifecycle'],
): CandidateRecord['lifecycle'] {
  if (decision === 'confirmed') return 'confirmed';
  if (decision === 'rejected') return 'rejected';
  if (decision === 'needs_screen') return current;
  return 'screened';
}
