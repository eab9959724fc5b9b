import fs from 'node:fs';
import {expect} from '@jest/globals';

/** The variable that rewrites committed snapshot files instead of comparing with them. */
export const UPDATE_VARIABLE = 'AUTOCTX_UPDATE_SNAPSHOTS';

/**
 * Compares `actual` with the committed JSON snapshot `file`, so that any change to what it records
 * is a visible diff in review. To change it deliberately, run the test with AUTOCTX_UPDATE_SNAPSHOTS=1,
 * read the diff of the file, and commit it with the change that caused it.
 */
export function expectSnapshotFile(file: string, actual: unknown): void {
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (process.env[UPDATE_VARIABLE] === '1') fs.writeFileSync(file, text);
  if (!fs.existsSync(file))
    throw new Error(`${file} does not exist: run this test once with ${UPDATE_VARIABLE}=1 and commit the file`);
  expect(JSON.parse(text)).toEqual(JSON.parse(fs.readFileSync(file, 'utf8')));
}
