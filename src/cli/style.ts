import chalk from 'chalk';

/**
 * Colour only on a terminal and never with NO_COLOR (chalk 5 ignores it, so
 * it is checked here as well as in bin/run.js).
 */
const enabled = !process.env.NO_COLOR && chalk.level > 0;
const wrap = (fn: (s: string) => string) => (s: string) => (enabled ? fn(s) : s);

export const paint = {
  bold: wrap(chalk.bold),
  dim: wrap(chalk.dim),
  red: wrap(chalk.red),
  green: wrap(chalk.green),
  yellow: wrap(chalk.yellow),
  cyan: wrap(chalk.cyan),
};

/** Digests are long; people read the first 12 characters. */
export function short(digest: string | null | undefined): string {
  return digest ? digest.slice(0, 12) : '-';
}
