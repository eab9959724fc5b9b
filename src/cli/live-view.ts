import {createElement as h} from 'react';
import {Box, Text, render} from 'ink';
import type {ProgressEvent} from '../core/evaluation/evaluate.js';
import {viewLines} from './progress-view.js';

function View({
  event,
  timing,
}: {
  event: ProgressEvent | null;
  timing: {startedAt: number; pairsAtStart: number; now: number};
}) {
  if (!event) return h(Text, {dimColor: true}, 'autoctx: preparing the plan…');
  const lines = viewLines(event, timing);
  return h(
    Box,
    {
      flexDirection: 'column',
      borderStyle: 'round',
      paddingX: 1,
      width: Math.max(60, Math.min(110, process.stderr.columns || 100)),
    },
    ...lines.map((line, i) => h(Text, {key: String(i), bold: i === 4, dimColor: i === 5}, line)),
  );
}

/**
 * The live view of `screen` and `confirm` on a terminal (progress-view.ts
 * says what it shows). Drawn
 * on stderr, so stdout keeps only the result. ink is imported only here.
 */
export function startLiveView(): {update: (e: ProgressEvent) => void; stop: () => void} {
  let latest: ProgressEvent | null = null;
  const startedAt = Date.now();
  let pairsAtStart: number | null = null;
  const timing = () => ({startedAt, pairsAtStart: pairsAtStart ?? 0, now: Date.now()});
  const app = render(h(View, {event: null, timing: timing()}), {
    stdout: process.stderr as unknown as NodeJS.WriteStream,
    patchConsole: false,
    exitOnCtrlC: true,
  });
  let stopped = false;
  // The clock moves while an evaluator thinks: redrawn every half second, not only per pair.
  const tick = setInterval(() => {
    if (!stopped && latest) app.rerender(h(View, {event: latest, timing: timing()}));
  }, 500);
  tick.unref();
  return {
    update(e) {
      latest = e;
      // Pairs recorded before this run (a resumed one) do not count toward its rate.
      pairsAtStart ??= e.counts.screen + e.counts.confirmation + e.counts.heldout;
      if (!stopped) app.rerender(h(View, {event: latest, timing: timing()}));
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(tick);
      app.unmount();
    },
  };
}
