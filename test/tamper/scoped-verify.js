// A verify for sweeps that change the content of one file at a time and put it back (the tamper sweep):
// the built verify (dist/), run with its own steps (VerifySteps in src/core/common/verify.ts: each check
// of kind-steps.generated.ts, a candidate's once per candidate), of which only those that can see the
// changed file run again. A first, whole run records, for each step, the files it read, what it was
// handed (the facts so far) and what it handed on (the facts it wrote, its findings). Each later run
// then answers a step from that record when the changed file is not one it read and what it is handed
// is the same; every other step runs as in a whole verify. A manifest is read once, for the first step
// that asks for its outline (a shared read): a change to the files it read makes every step that asked
// for it run again. A file read outside the steps (the root's, a manifest no step asked for) makes the
// run a whole verify.
import fs from 'node:fs';
import path from 'node:path';
import {syncBuiltinESMExports} from 'node:module';
import {isDeepStrictEqual} from 'node:util';

/** Where reads are recorded: the current step's set, the set of reads outside the steps, or nowhere (null). */
let sink = null;
for (const name of ['openSync', 'readFileSync']) {
  const original = fs[name];
  fs[name] = function (p, ...rest) {
    if (sink !== null && (typeof p === 'string' || p instanceof URL || Buffer.isBuffer(p)))
      sink.add(path.resolve(p instanceof URL ? p.pathname : String(p)));
    return original.call(this, p, ...rest);
  };
}
syncBuiltinESMExports();

export class ScopedVerify {
  /**
   * verify: the built verify function; options: its options (a fixed `now`, so that every run judges at the same time).
   */
  constructor(verify, options) {
    this.verify = verify;
    this.options = options;
    /**
     * By step name: {reads, inputs, output}. What a step was handed and handed on is kept as is: no check changes what
     * it is handed.
     */
    this.steps = new Map();
    this.outside = new Set();
    /** By the key of a shared read (a manifest's digest): the files it read. A step that asked for it sees them. */
    this.sharedReads = new Map();
    /** Over the runs after a change: the steps, those that ran again, and the runs that were whole verifies. */
    this.count = {steps: 0, rerun: 0, whole: 0};
    this.result = this.#record();
  }

  /** The whole run: every step runs, and what it read, was handed and handed on is kept. */
  #record() {
    const steps = this.steps;
    const outside = this.outside;
    const sharedReads = this.sharedReads;
    /** The keys of the shared reads the current step asked for. */
    let asking = null;
    sink = outside;
    try {
      return this.verify({
        ...this.options,
        steps: {
          run(name, inputs, step) {
            if (steps.has(name)) throw new Error(`verify ran step "${name}" twice`);
            const reads = new Set();
            const asked = new Set();
            const around = sink;
            const aroundAsked = asking;
            sink = reads;
            asking = asked;
            try {
              const output = step();
              steps.set(name, {reads, asked, inputs, output});
              return output;
            } finally {
              sink = around;
              asking = aroundAsked;
            }
          },
          shared(key, read) {
            asking?.add(key);
            if (!sharedReads.has(key)) sharedReads.set(key, new Set());
            const around = sink;
            sink = sharedReads.get(key);
            try {
              return read();
            } finally {
              sink = around;
            }
          },
        },
      });
    } finally {
      sink = null;
    }
  }

  /** verify, after `file` (an absolute path, the only change since the whole run) was changed. */
  after(file) {
    const changed = path.resolve(file);
    if (this.outside.has(changed)) {
      this.count.whole++;
      this.count.steps += this.steps.size;
      this.count.rerun += this.steps.size;
      return this.verify(this.options);
    }
    const steps = this.steps;
    const count = this.count;
    const keys = new Set([...this.sharedReads].filter(([, files]) => files.has(changed)).map(([k]) => k));
    const sees = (kept) => kept.reads.has(changed) || [...kept.asked].some((k) => keys.has(k));
    return this.verify({
      ...this.options,
      steps: {
        run(name, inputs, step) {
          const kept = steps.get(name);
          count.steps++;
          if (kept === undefined) {
            count.rerun++;
            return step();
          }
          // Answered steps hand on the kept objects, so what later steps are handed compares by reference, cheaply.
          if (!sees(kept) && isDeepStrictEqual(inputs, kept.inputs)) return kept.output;
          count.rerun++;
          const output = step();
          if (isDeepStrictEqual(output, kept.output)) return kept.output;
          // The facts that came out the same are handed on as the kept objects, for later steps to compare cheaply.
          const facts = Object.fromEntries(
            Object.entries(output.facts).map(([k, v]) => [
              k,
              isDeepStrictEqual(v, kept.output.facts[k]) ? kept.output.facts[k] : v,
            ]),
          );
          return {...output, facts};
        },
      },
    });
  }
}

/** A small seeded generator (mulberry32), so that a sample can be drawn again from its seed. */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
