/**
 * What an evaluator wrote on stderr, kept and shown when it fails: the last
 * 64 KiB are kept while it runs (the end of a stack trace is where the cause
 * is, not the start), and a failure shows their last lines, bounded.
 */
export const KEPT_STDERR = 64 * 1024;
export const TAIL_LINES = 20;
const TAIL_CHARS = 4000;
const LINE_CHARS = 300;

/** Append what arrived, keeping the last KEPT_STDERR characters. */
export function keepStderr(kept: string, more: string): string {
  const all = kept + more;
  return all.length > KEPT_STDERR ? all.slice(all.length - KEPT_STDERR) : all;
}

/** The last lines of stderr, each and all of them bounded; empty lines at the end dropped. */
export function stderrTail(stderr: string): string[] {
  const lines = stderr.replace(/\s+$/, '').split(/\r?\n/).slice(-TAIL_LINES);
  const tail: string[] = [];
  let chars = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.length > LINE_CHARS ? `${lines[i]!.slice(0, LINE_CHARS)}…` : lines[i]!;
    if (chars + line.length > TAIL_CHARS) break;
    chars += line.length;
    tail.unshift(line);
  }
  return tail[0] === '' && tail.length === 1 ? [] : tail;
}

/**
 * The one line that names the failure: the last line that says "error"
 * (a Node stack trace ends with "Node.js v20…", a Python one with the
 * exception), else the last line.
 */
export function stderrHeadline(tail: readonly string[]): string {
  const named = [...tail].reverse().find((l) => /error|exception|traceback|not found|denied|cannot/i.test(l));
  return (named ?? tail[tail.length - 1] ?? '').trim().slice(0, 200);
}
