import * as Flags from '@oclif/core/flags';
import type {Interfaces} from '@oclif/core';
import {percentToBasisPoints} from '../model/release/release.js';

/** Flags the release commands share: --scope, --expect-registry, --actor, and percentages parsed to basis points. */
export const scopeFlag = Flags.string({
  summary: 'Registry scope (trimmed, lowercased; blank or left out: global).',
  helpValue: 'SCOPE',
});
export const expectRegistryFlag = Flags.string({
  summary:
    'Only if the scope\'s registry has this digest now (release list --json shows it; "none" before its ' +
    'first change). A lost swap is STALE_REGISTRY, exit 6.',
  helpValue: 'DIGEST',
});
export const actorFlag = Flags.string({
  summary: 'Who makes the change (default: $AUTOCTX_ACTOR, else the git user).',
  helpValue: 'A',
});

export function percentFlag(name: string, summary: string): Interfaces.OptionFlag<number | undefined> {
  const flag = Flags.custom<number>({parse: async (input: string) => percentToBasisPoints(input, `--${name}`)});
  return flag({summary, helpValue: 'P'}) as Interfaces.OptionFlag<number | undefined>;
}

export const listFlag = (summary: string, helpValue: string) => Flags.string({summary, helpValue, multiple: true});

/** Flags of the commands that sign (ARCHITECTURE §10.3). */
export const signingKeyFlag = Flags.string({
  summary:
    'The signing key: an unencrypted Ed25519 or RSA private key file, or a .pub file whose key ssh-agent ' +
    'holds (default: $AUTOCTX_SIGNING_KEY, else signing_key in the user config).',
  helpValue: 'FILE',
});
export const allowedSignersFlag = Flags.string({
  summary:
    'The trust anchor: an allowed_signers file kept outside the repository (default: ' +
    "$AUTOCTX_ALLOWED_SIGNERS). The tree's own file must equal it or descend from it through signed " +
    'changes.',
  helpValue: 'FILE',
});
