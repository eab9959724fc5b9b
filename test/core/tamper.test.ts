import fs from 'node:fs';
import path from 'node:path';
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {verify} from '../../src/core/common/verify.js';
import {runCli} from '../helpers/cli.js';
import {copySampleKnowledge} from '../helpers/tree.js';

let knowledge: string;
let manifests: string[];
beforeAll(() => {
  knowledge = copySampleKnowledge();
  const dir = path.join(knowledge, 'demo/context_bundles/bundles');
  manifests = fs.readdirSync(dir).map((f) => path.join(dir, f));
});
afterAll(() => fs.rmSync(path.dirname(knowledge), {recursive: true, force: true}));

/** Positions of every byte of every component's content inside the manifest file's text. */
function contentByteOffsets(text: string): number[] {
  const offsets: number[] = [];
  const re = /"content": "((?:[^"\\]|\\.)*)"/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const start = m.index + '"content": "'.length;
    for (let i = 0; i < m[1]!.length; i++) offsets.push(start + i);
  }
  return offsets;
}

describe('tamper evidence', () => {
  it('verify detects a one-byte change in any byte of any component content of any manifest (exit 8)', () => {
    let flipped = 0;
    for (const file of manifests) {
      const original = fs.readFileSync(file);
      const offsets = contentByteOffsets(original.toString('latin1'));
      expect(offsets.length).toBeGreaterThan(0);
      for (const at of offsets) {
        const bytes = Buffer.from(original);
        // Change the byte to another printable ASCII character that keeps the JSON valid.
        bytes[at] = bytes[at] === 0x61 ? 0x62 : 0x61;
        if (bytes[at - 1] === 0x5c) bytes[at] = 0x6e; // after a backslash: \n instead, still valid JSON
        if (bytes.equals(original)) bytes[at] = 0x63;
        fs.writeFileSync(file, bytes);
        const r = verify({knowledge});
        expect(r.status).toBe('failed');
        expect(r.errors.map((e) => e.file)).toContain(path.relative(knowledge, file));
        flipped++;
      }
      fs.writeFileSync(file, original);
    }
    expect(verify({knowledge}).status).toBe('ok');
    expect(flipped).toBeGreaterThan(60);
  });

  it('the CLI exits 8 and names the file', () => {
    const file = manifests[0]!;
    const original = fs.readFileSync(file, 'utf8');
    fs.writeFileSync(
      file,
      original.replace(/"content": "(.)/, (_m, c: string) => `"content": "${c === 'x' ? 'y' : 'x'}`),
    );
    const r = runCli(['verify', '--knowledge', knowledge, '--json']);
    fs.writeFileSync(file, original);
    expect(r.status).toBe(8);
    expect(r.json.errors[0]).toMatchObject({
      severity: 'error',
      file: path.relative(knowledge, file),
      code: 'DIGEST_MISMATCH',
    });
  });
});
