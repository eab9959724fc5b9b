import {basisPointsText} from '../../model/release/release.js';
import type {ScopeSummary} from '../../core/release/release-query.js';

/** A scope's releases as people read them (release list, status). */
export function scopeLines(s: ScopeSummary, short: (d: string | null) => string): string[] {
  const head =
    `scope ${s.scope}: ACTIVE ${s.active.version ?? 'unnamed'} ` +
    `(${short(s.active.bundle_digest)})` +
    `${s.registry_pending ? ', registry pending (autoctx repair completes it)' : ''}` +
    `${s.runnable.versions ? `, runnable ${s.runnable.versions.join(', ') || 'none'}` : ''}`;
  return [
    head,
    ...s.releases.map((r) => {
      const canary = r.canary
        ? `  ${r.canary.basis_points === null ? 'whole scope' : basisPointsText(r.canary.basis_points)}` +
          `${r.canary.tenants.length ? ` tenants ${r.canary.tenants.join(',')}` : ''}` +
          `${r.canary.resource_families.length ? ` families ${r.canary.resource_families.join(',')}` : ''}`
        : '';
      const shadow = r.shadow
        ? `  sample ${basisPointsText(r.shadow.basis_points)}, cap ${r.shadow.daily_cap}/day`
        : '';
      return (
        `  ${r.version.padEnd(16)} ${r.state.padEnd(10)} ` +
        `${short(r.bundle_digest)}${canary}${shadow}${r.runnable ? '' : '  not runnable'}`
      );
    }),
  ];
}
