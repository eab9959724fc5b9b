import {fail} from '../../errors.js';

/**
 * The names of the entries of an append-only history. An entry is named by
 * the SHA-256 its successor names it by (`<sha256>.json`), so two clones that
 * each append an entry write two files, never one path with two contents.
 * Earlier versions named entries by position (`<seq>.json`); those names are
 * still read, and `autoctx upgrade` renames them.
 */
export type HistoryKey = string | number;

export const DIGEST_ENTRY_NAME = /^[0-9a-f]{64}\.json$/;
export const LEGACY_ENTRY_NAME = /^\d{6}\.json$/;

export function isHistoryEntryName(name: string): boolean {
  return DIGEST_ENTRY_NAME.test(name) || LEGACY_ENTRY_NAME.test(name);
}

/** The key a listed name stands for: a digest, or an earlier version's position. */
export function historyKeyOf(name: string): HistoryKey {
  return LEGACY_ENTRY_NAME.test(name) ? Number(name.slice(0, 6)) : name.slice(0, -5);
}

export function historyEntryName(key: HistoryKey, what: string): string {
  if (typeof key === 'number') {
    if (!Number.isSafeInteger(key) || key < 1 || key > 999999) fail('INVALID_INPUT', `not a ${what}: ${key}`);
    return `${String(key).padStart(6, '0')}.json`;
  }
  if (!/^[0-9a-f]{64}$/.test(key)) fail('INVALID_INPUT', `not a ${what} digest: ${JSON.stringify(key)}`);
  return `${key}.json`;
}
