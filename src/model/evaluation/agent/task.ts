import {createTwoFilesPatch} from 'diff';
import {fail} from '../../../errors.js';

/** An agent task as the evaluator runs it (schemas/agent-task.schema.json, checked before this). */
export interface AgentTask {
  files: Record<string, string>;
  dir: string | null;
  dirDigest: string | null;
  git: boolean;
  checker: {command: string[]; files: Record<string, string>; timeoutSeconds: number};
  /** The only text of the fixture the agent's session receives. */
  prompt: string;
}

export const DEFAULT_CHECKER_TIMEOUT_SECONDS = 60;

/** The bounds of each artifact, in bytes (what autoctx accepts is at most 1 MiB). */
export const ARTIFACT_LIMITS = {
  final_answer: 64 * 1024,
  transcript: 256 * 1024,
  diff: 512 * 1024,
  check_output: 64 * 1024,
} as const;

export type ArtifactName = keyof typeof ARTIFACT_LIMITS;

interface RawTask {
  initial_state: {
    agent_task: 1;
    files?: Record<string, string>;
    dir?: string;
    dir_digest?: string;
    git?: boolean;
    checker: {command: string[]; files?: Record<string, string>; timeout_seconds?: number};
  };
  observation: {prompt: string};
}

/** A task from its schema-valid fixture parts; `dir_digest` without `dir` is refused (it would bind nothing). */
export function agentTaskOf(value: RawTask): AgentTask {
  const s = value.initial_state;
  if (s.dir_digest !== undefined && s.dir === undefined)
    fail('INVALID_INPUT', 'an agent task gives "dir_digest" without "dir": the digest binds the folder it names');
  for (const [what, files] of [
    ['files', s.files ?? {}],
    ['checker.files', s.checker.files ?? {}],
  ] as const) {
    const paths = Object.keys(files);
    const folder = paths.find((p) => paths.some((q) => q.startsWith(`${p}/`)));
    if (folder !== undefined)
      fail('INVALID_INPUT', `an agent task's ${what} names "${folder}" both as a file and as a folder of others`);
  }
  return {
    files: s.files ?? {},
    dir: s.dir ?? null,
    dirDigest: s.dir_digest ?? null,
    git: s.git === true,
    checker: {
      command: s.checker.command,
      files: s.checker.files ?? {},
      timeoutSeconds: s.checker.timeout_seconds ?? DEFAULT_CHECKER_TIMEOUT_SECONDS,
    },
    prompt: value.observation.prompt,
  };
}

const MARK = (dropped: number) => `\n[… ${dropped} bytes left out by autoctx: the artifact is bounded …]\n`;

/**
 * Text within `limit` bytes of UTF-8: whole when it fits, else its head and its tail around a line saying how many
 * bytes were left out (cut at character boundaries).
 */
export function boundedText(text: string, limit: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= limit) return text;
  const room = limit - Buffer.byteLength(MARK(bytes.length), 'utf8');
  const head = cutUtf8(bytes.subarray(0, Math.floor(room / 2)), 'end');
  const tail = cutUtf8(bytes.subarray(bytes.length - Math.floor(room / 2)), 'start');
  return `${head}${MARK(bytes.length - Buffer.byteLength(head) - Buffer.byteLength(tail))}${tail}`;
}

/** Bytes as text, dropping a character cut in two at the given end. */
function cutUtf8(bytes: Buffer, at: 'start' | 'end'): string {
  let b = bytes;
  if (at === 'end') {
    let i = b.length;
    while (i > 0 && i > b.length - 4 && (b[i - 1]! & 0xc0) === 0x80) i--;
    if (i > 0 && b[i - 1]! >= 0xc0) b = b.subarray(0, i - 1);
  } else {
    let i = 0;
    while (i < b.length && i < 4 && (b[i]! & 0xc0) === 0x80) i++;
    b = b.subarray(i);
  }
  return b.toString('utf8');
}

/** A file the workspace diff shows: its path and its bytes before and after (null: absent). */
export interface FileChange {
  path: string;
  before: Buffer | null;
  after: Buffer | null;
}

/** Files larger than this are named in the diff, not shown line by line. */
const DIFF_FILE_LIMIT = 256 * 1024;

const isText = (b: Buffer) => !b.includes(0) && Buffer.from(b.toString('utf8'), 'utf8').equals(b);

/** The workspace diff: a unified diff of each changed text file, one line for a binary or large one. */
export function workspaceDiff(changes: readonly FileChange[]): string {
  const parts: string[] = [];
  for (const c of changes) {
    const a = c.before ?? Buffer.alloc(0);
    const b = c.after ?? Buffer.alloc(0);
    const from = c.before === null ? '/dev/null' : `a/${c.path}`;
    const to = c.after === null ? '/dev/null' : `b/${c.path}`;
    if (!isText(a) || !isText(b) || a.length > DIFF_FILE_LIMIT || b.length > DIFF_FILE_LIMIT) {
      parts.push(`Files ${from} and ${to} differ (${a.length} → ${b.length} bytes; binary or large, not shown)\n`);
      continue;
    }
    parts.push(createTwoFilesPatch(from, to, a.toString('utf8'), b.toString('utf8'), '', '', {context: 3}));
  }
  return parts.join('');
}
