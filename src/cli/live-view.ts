import {createElement as h} from 'react';
import {Box, Text, render} from 'ink';
import type {ProgressEvent} from '../core/evaluate.js';

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? '–' : x.toFixed(4));

function bar(done: number, planned: number, width = 24): string {
  const filled = planned === 0 ? 0 : Math.round((Math.min(done, planned) / planned) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** Where the interval stands against the minimum effect, on one line. */
function intervalLine(e: ProgressEvent): string {
  const d = e.decision;
  if (!d || d.confidence_low === null || d.confidence_high === null) return `mean ${fmt(d?.mean_effect)}`;
  const side = d.confidence_low > e.min_effect ? 'clears' : d.confidence_high <= e.min_effect ? 'below' : 'overlaps';
  return `mean ${fmt(d.mean_effect)}  interval [${fmt(d.confidence_low)}, ${fmt(d.confidence_high)}] ${side} the minimum effect ${e.min_effect}`;
}

function View({event}: {event: ProgressEvent | null}) {
  if (!event) return h(Text, {dimColor: true}, 'autoctx: preparing the plan…');
  const lanes = ['screen', 'confirmation', 'heldout'] as const;
  return h(
    Box,
    {flexDirection: 'column', borderStyle: 'round', paddingX: 1, width: Math.max(60, Math.min(110, process.stderr.columns || 100))},
    ...lanes.map((lane) => h(Text, {key: lane}, `${lane.padEnd(13)} ${bar(event.counts[lane], event.planned[lane])} ${event.counts[lane]}/${event.planned[lane]}`)),
    h(Text, {key: 'interval'}, intervalLine(event)),
    h(Text, {key: 'decision', bold: true}, `decision: ${event.decision?.decision ?? 'starting'}${event.fixture ? `   (last: ${event.lane} ${event.fixture}, seed ${event.seed})` : ''}`),
  );
}

/**
 * The live view of `confirm` on a terminal: pairs done per lane, the running
 * mean and interval against the minimum effect, the current decision. Drawn
 * on stderr, so stdout keeps only the result. ink is imported only here.
 */
export function startLiveView(): {update: (e: ProgressEvent) => void; stop: () => void} {
  let latest: ProgressEvent | null = null;
  const app = render(h(View, {event: null}), {stdout: process.stderr as unknown as NodeJS.WriteStream, patchConsole: false, exitOnCtrlC: true});
  let stopped = false;
  return {
    update(e) {
      latest = e;
      if (!stopped) app.rerender(h(View, {event: latest}));
    },
    stop() {
      if (stopped) return;
      stopped = true;
      app.unmount();
    },
  };
}
