import {KnowledgeStore, knowledgeRootFrom, type ScenarioStore} from '../../store/index.js';
import {fail} from '../../errors.js';
import {prepareSigning} from '../signing/signing.js';

/** Options every command that reads or writes a knowledge tree shares. */
export interface StoreOptions {
  knowledge?: string | undefined;
  scenario?: string | undefined;
  lockTimeout?: number | undefined;
  now?: () => Date;
  /**
   * Signing (ARCHITECTURE §10.3): --signing-key and the --allowed-signers anchor, for the commands that sign or check
   * signatures.
   */
  signingKey?: string | undefined;
  allowedSigners?: string | undefined;
  /** --actor: who makes the change (a late-signed step is signed as it). */
  actor?: string | undefined;
}

import {DEFAULT_EVALUATOR_TIMEOUT_SECONDS, DEFAULT_LOCK_TIMEOUT_SECONDS} from './defaults.js';

export {DEFAULT_EVALUATOR_TIMEOUT_SECONDS, DEFAULT_LOCK_TIMEOUT_SECONDS} from './defaults.js';

export function openKnowledge(options: StoreOptions): KnowledgeStore {
  const k = KnowledgeStore.open(knowledgeRootFrom(options.knowledge));
  // In a signed scenario a step of a command that does not sign by itself is signed with the key its options, the
  // environment or the user config give (or refused and undone when there is none: ScenarioStore.withLock).
  k.lateSigning = (store) => {
    prepareSigning(
      store,
      {signingKey: options.signingKey, allowedSigners: options.allowedSigners, knowledge: options.knowledge},
      {actor: options.actor ?? null, role: 'sign'},
    );
  };
  return k;
}

/** Open the knowledge root and the scenario named (or the only one). */
export function openScenario(options: StoreOptions): ScenarioStore {
  const k = openKnowledge(options);
  return k.scenario(k.resolveScenario(options.scenario));
}

export function lockTimeout(options: StoreOptions): number {
  const t = options.lockTimeout ?? DEFAULT_LOCK_TIMEOUT_SECONDS;
  if (!Number.isFinite(t) || t < 0) fail('USAGE', '--lock-timeout must be a non-negative number of seconds');
  return t;
}

export function now(options: StoreOptions): Date {
  return options.now ? options.now() : new Date();
}

/** Seconds for an evaluator arm or an audit: the given value, else the default. */
export function evaluatorTimeout(seconds: number | undefined): number {
  const t = seconds ?? DEFAULT_EVALUATOR_TIMEOUT_SECONDS;
  if (!Number.isFinite(t) || t <= 0)
    fail('USAGE', `--timeout must be a positive number of seconds, got ${String(seconds)}`);
  return t;
}
