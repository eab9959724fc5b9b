/** What hook install and uninstall change besides the hooks: the project's .gitignore, and --dry-run's diff. */
import path from 'node:path';
import {createTwoFilesPatch} from 'diff';
import {readConfigText} from '../../store/io/config-files.js';

/** One file a hook command writes (after null: removes), with its text before and after. */
export interface FileChange {
  file: string;
  before: string | null;
  after: string | null;
}

/** The local settings file of Claude Code in a project: each teammate's own, never committed. */
export const CLAUDE_LOCAL_SETTINGS = '.claude/settings.local.json';

/** .gitignore lines that already keep the local settings file out of git. */
const IGNORING = new Set([
  CLAUDE_LOCAL_SETTINGS,
  `/${CLAUDE_LOCAL_SETTINGS}`,
  'settings.local.json',
  '.claude',
  '.claude/',
  '/.claude',
  '/.claude/',
  '.claude/*',
  '/.claude/*',
  '*.local.json',
]);

/**
 * The project's .gitignore with the local settings file added, as its last line, when no line of it ignores the file
 * yet (null: nothing to add). Every other byte is kept; a missing final newline is added before the new line.
 */
export function gitignoreChange(project: string): FileChange | null {
  const file = path.join(project, '.gitignore');
  const before = readConfigText(file);
  const lines = (before ?? '').split(/\r?\n/).map((l) => l.trim());
  if (lines.some((l) => IGNORING.has(l))) return null;
  const head = before === null || before === '' ? '' : before.endsWith('\n') ? before : `${before}\n`;
  return {file, before, after: `${head}${CLAUDE_LOCAL_SETTINGS}\n`};
}

/** The changes as one unified diff, git's way (/dev/null for a file created or removed). */
export function changesPatch(changes: readonly FileChange[]): string {
  return changes
    .map((c) =>
      createTwoFilesPatch(
        c.before === null ? '/dev/null' : c.file,
        c.after === null ? '/dev/null' : c.file,
        c.before ?? '',
        c.after ?? '',
        undefined,
        undefined,
        {context: 3},
      )
        .split('\n')
        .filter((l) => !l.startsWith('=====') && !l.startsWith('Index: '))
        .join('\n'),
    )
    .join('');
}
