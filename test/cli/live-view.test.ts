import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {afterEach, describe, expect, it} from '@jest/globals';
import type {ProgressEvent} from '../../src/core/evaluation/evaluate.js';
import {meanLane, timingLine, viewLines} from '../../src/cli/progress-view.js';
import {PROJECT_ROOT} from '../helpers/paths.js';
import {FAKE, FIXTURES_12, POLICY_SMALL, makeTree, type Tree} from '../helpers/pipeline.js';

// The live view shows elapsed time, rate and what is left; labels the lane of the mean; bars
// that are honest about planned maxima the stopping rule will not reach; screen has it too; colour per stream.
const trees: Tree[] = [];
afterEach(() => trees.splice(0).forEach((t) => fs.rmSync(t.dir, {recursive: true, force: true})));

const event = (over: Partial<ProgressEvent>): ProgressEvent => ({
  type: 'pair',
  counts: {screen: 2, confirmation: 3, heldout: 0},
  planned: {screen: 4, confirmation: 40, heldout: 6},
  reach: {screen: {min: 2, max: 2}, confirmation: {min: 6, max: 20}, heldout: {min: 2, max: 2}},
  decision: {
    decision: 'needs_confirmation',
    reason: 'screen passed; more matched confirmation pairs required',
    screen_pairs: 2,
    confirmation_pairs: 3,
    heldout_pairs: 0,
    mean_effect: 0.31,
    confidence_low: null,
    confidence_high: null,
  },
  min_effect: 0,
  lane: 'confirmation',
  fixture: 'f07',
  seed: 12,
  ...over,
});
const strip = (s: string) => s.replace(/\x1b\[[0-9;?]*[a-zA-Z]/g, '');

describe('what the live view shows', () => {
  it(
    "labels the mean with its lane: the screen's during confirmation until the " +
      "interval exists, then confirmation's, the held-out lane's when it decides against",
    () => {
      expect(meanLane(event({}))).toBe('screen');
      const withInterval = event({
        decision: {...event({}).decision!, confirmation_pairs: 6, confidence_low: 0.1, confidence_high: 0.5},
      });
      expect(meanLane(withInterval)).toBe('confirmation');
      expect(
        meanLane(
          event({
            decision: {
              ...withInterval.decision!,
              decision: 'rejected',
              reason: 'candidate regressed on the held-out lane',
            },
          }),
        ),
      ).toBe('heldout');
      expect(viewLines(event({}), {startedAt: 0, pairsAtStart: 0, now: 1000})[3]).toBe(
        'mean (screen lane) 0.3100 against the minimum effect 0',
      );
    },
  );

  it('draws bars against what the stopping rule can reach, not the planned units, and says what was planned', () => {
    const lines = viewLines(event({}), {startedAt: 0, pairsAtStart: 0, now: 1000});
    expect(lines[0]).toBe(`screen        ${'█'.repeat(24)} 2 (done, 4 planned)`);
    expect(lines[1]).toBe(`confirmation  ${'█'.repeat(4)}${'░'.repeat(20)} 3 of 6–20, 40 planned`);
    expect(lines[2]).toBe(`held-out      ${'░'.repeat(24)} 0 of 2, 6 planned`);
    const stopped = viewLines(
      event({
        counts: {screen: 2, confirmation: 6, heldout: 0},
        decision: {
          ...event({}).decision!,
          decision: 'needs_heldout',
          confirmation_pairs: 6,
          confidence_low: 0.1,
          confidence_high: 0.5,
        },
      }),
      {startedAt: 0, pairsAtStart: 0, now: 1000},
    );
    expect(stopped[1]).toBe(`confirmation  ${'█'.repeat(24)} 6 (done; the rule stopped before 20, 40 planned)`);
  });

  it("gives the elapsed time, the rate of this run's pairs, and what is left as a range", () => {
    // 5 pairs recorded, 1 of them before this run, in 2 s: 2 pairs/s; left: 3–17 confirmation pairs and 2 held-out.
    expect(timingLine(event({}), 0, 1, 2000)).toBe(
      'elapsed 2.0 s · 2.0 pairs/s · left: 5–19 pairs, about 2.5 s to 9.5 s',
    );
  });
});

describe('through the binary, on a terminal', () => {
  const tty = (command: string, out: string) => {
    const r = spawnSync('script', ['-qfec', command, out], {
      cwd: PROJECT_ROOT,
      encoding: 'utf8',
      env: {...process.env, NODE_OPTIONS: '', NO_COLOR: '', FORCE_COLOR: '', CI: '', TERM: 'xterm-256color'},
    });
    return {status: r.status, screen: fs.readFileSync(out, 'utf8')};
  };
  const bin = path.join(PROJECT_ROOT, 'bin/run.js');

  it.each(['screen', 'confirm'])(
    '%s draws the live view on stderr, with the timing line and the lane of the mean',
    (verb) => {
      const t = makeTree();
      trees.push(t);
      const c = t.propose('c', {
        'playbook/playbook.md': 'Be helpful and precise.\n',
        'routing_config/roles.json': '{"model_competitor": "small"}',
      });
      const out = path.join(t.dir, 'tty.txt');
      const r = tty(
        `node ${bin} ${verb} ${c} --knowledge ${t.knowledge} --evaluator 'node ${FAKE}' ` +
          `--evaluator-mode persistent --fixtures ${FIXTURES_12} --policy ${POLICY_SMALL}`,
        out,
      );
      expect(r.status).toBe(0);
      const shown = strip(r.screen);
      expect(shown).toMatch(/elapsed \d+\.\d s · \d+\.\d pairs\/s · left: /);
      expect(shown).toMatch(verb === 'screen' ? /mean \(screen lane\)/ : /mean \(confirmation lane\)/);
      expect(shown).toMatch(/screen {8}█+ \d+ \(done/);
    },
  );

  it(
    'colour is decided per stream: an error on a terminal is ' +
      'coloured even when stdout is a file, and not the other way round',
    () => {
      const t = makeTree();
      trees.push(t);
      const out = path.join(t.dir, 'tty.txt');
      const stdoutFile = path.join(t.dir, 'stdout.txt');
      const coloured = tty(`node ${bin} bundle show 00000000 --knowledge ${t.knowledge} > ${stdoutFile}`, out);
      expect(coloured.status).toBe(2);
      expect(coloured.screen).toMatch(/\x1b\[31merror\x1b\[39m/);
      const stderrFile = path.join(t.dir, 'stderr.txt');
      tty(`node ${bin} bundle show 00000000 --knowledge ${t.knowledge} 2> ${stderrFile}`, out);
      expect(fs.readFileSync(stderrFile, 'utf8')).toMatch(/^error [A-Z_]+: /);
    },
  );
});
