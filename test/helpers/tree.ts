import {createHash} from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {RICH_KNOWLEDGE, SAMPLE_KNOWLEDGE} from './paths.js';

const made: string[] = [];

/** A fresh temporary folder; every one is removed after its test file (test/helpers/setup.ts). */
export function tempDir(prefix = 'autoctx-test-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Remove the temporary folders this test file made. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, {recursive: true, force: true});
}

/**
 * Hash of a whole tree: every file's path and bytes, every folder, every link
 * and its target. Equal hashes mean nothing was created, changed or removed.
 */
/**
 * A digest of every entry under root; `except` names files (relative paths) left out, for "nothing else changed"
 * checks.
 */
export function treeHash(root: string, except: (rel: string) => boolean = () => false): string {
  const h = createHash('sha256');
  const visit = (dir: string) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const p = path.join(dir, name);
      const rel = path.relative(root, p);
      if (except(rel)) continue;
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) h.update(`L ${rel} -> ${fs.readlinkSync(p)}\n`);
      else if (st.isDirectory()) {
        h.update(`D ${rel}\n`);
        visit(p);
      } else {
        h.update(`F ${rel} ${st.size}\n`);
        h.update(fs.readFileSync(p));
      }
    }
  };
  if (fs.existsSync(root)) visit(root);
  return h.digest('hex');
}

/** A writable copy of the tree the Python implementation wrote (or of another fixture tree, `from`). */
export function copySampleKnowledge(from: string = SAMPLE_KNOWLEDGE): string {
  const dir = tempDir('autoctx-sample-');
  const dest = path.join(dir, 'knowledge');
  fs.cpSync(from, dest, {recursive: true});
  const chmod = (p: string) => {
    const st = fs.statSync(p);
    fs.chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) chmod(path.join(p, n));
  };
  chmod(dest);
  return dest;
}

/** A writable copy of test/fixtures/upstream-rich/knowledge. */
export function copyRichKnowledge(): string {
  return copySampleKnowledge(RICH_KNOWLEDGE);
}

/** Write a component folder from {"kind/key.ext": content}. */
export function writeSource(dir: string, files: Record<string, string>): string {
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(rel)), {recursive: true});
    fs.writeFileSync(path.join(dir, rel), content);
  }
  return dir;
}

/**
 * Remove what only autoctx writes about records (every record history and the
 * scenario's record_histories.json), as a tree the Python implementation or
 * an earlier autoctx wrote has neither; for tests that make such a tree.
 */
export function withoutRecordHistories(knowledge: string): void {
  for (const scenario of fs.readdirSync(knowledge)) {
    const dir = path.join(knowledge, scenario, 'context_bundles');
    if (scenario.startsWith('.') || !fs.existsSync(dir)) continue;
    fs.rmSync(path.join(dir, 'record_histories.json'), {force: true});
    const candidates = path.join(dir, 'candidates');
    if (fs.existsSync(candidates))
      for (const d of fs.readdirSync(candidates))
        fs.rmSync(path.join(candidates, d, 'record_history'), {recursive: true, force: true});
  }
}
