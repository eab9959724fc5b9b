import fs from 'node:fs';
import path from 'node:path';
import {describe, expect, it} from '@jest/globals';
import {runCliProcess} from '../helpers/cli.js';
import {PROJECT_ROOT} from '../helpers/paths.js';

interface ManifestCommand {
  summary?: string;
  description?: string;
  hidden?: boolean;
}

const manifest = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8')) as {
  commands: Record<string, ManifestCommand>;
};

/** The TOPICS section of `autoctx --help`: topic name → its description, lines joined. */
function helpTopics(text: string): Map<string, string> {
  const lines = text.split('\n');
  const start = lines.indexOf('TOPICS');
  expect(start).toBeGreaterThanOrEqual(0);
  const topics = new Map<string, string>();
  let current: string | undefined;
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    const m = /^ {2}(\S+)\s+(.*)$/.exec(line);
    if (m) {
      current = m[1]!;
      topics.set(current, m[2]!.trim());
    } else if (current) topics.set(current, `${topics.get(current)} ${line.trim()}`);
  }
  return topics;
}

/** The first line of what a command says about itself (what oclif would borrow for a topic without its own). */
function firstLine(c: ManifestCommand): string {
  return (c.summary ?? c.description ?? '').split('\n')[0]!.trim();
}

describe('autoctx --help', () => {
  const r = runCliProcess(['--help']);
  const topics = helpTopics(r.stdout);
  const topicNames = new Set(
    Object.keys(manifest.commands)
      .filter((id) => id.includes(':') && !manifest.commands[id]!.hidden)
      .map((id) => id.split(':')[0]!),
  );

  it('lists every topic that has commands', () => {
    expect(r.status).toBe(0);
    for (const t of topicNames) expect([t, topics.has(t)]).toEqual([t, true]);
  });

  it("describes each topic in its own words, never one of its commands' descriptions", () => {
    const borrowed: string[] = [];
    for (const [topic, text] of topics) {
      for (const [id, c] of Object.entries(manifest.commands)) {
        if (id !== topic && !id.startsWith(`${topic}:`)) continue;
        const own = firstLine(c);
        if (own !== '' && (text === own || text.startsWith(own.slice(0, 40))))
          borrowed.push(`${topic}: "${text}" (from ${id})`);
      }
    }
    expect(borrowed).toEqual([]);
    expect(topics.size).toBeGreaterThan(10);
  });
});
