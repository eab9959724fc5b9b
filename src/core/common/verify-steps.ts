import type {Findings, VerifyIssue} from '../../store/findings.js';

/**
 * How verify runs its steps (each entry of kind-steps.generated.ts; a
 * candidate's check once per candidate): every one of them, always, unless a
 * caller that changes one file at a time and verifies after each change (the
 * tamper sweep in test/tamper) passes its own. `run` gets the step's name
 * (`<scenario>: start|candidate <digest>|scenario <order>`), what it is handed
 * (the facts so far, or the scenario's view) and the step; the step returns
 * what it hands on (a StepOutput). A caller may answer a step with what it
 * returned in an earlier run, when no file it read changed since and it is
 * handed the same; verify then records that answer as the step's own. By
 * default every step runs and verify's result is the same as without steps.
 */
export interface VerifySteps {
  run(name: string, inputs: unknown, step: () => StepOutput): StepOutput;
  /**
   * A read whose answer every later step may see (`key`: the digest of a
   * manifest whose outline a step asks for; it is read once, for the first
   * step that asks): not one step's own.
   */
  shared?<T>(key: string, read: () => T): T;
}

/** What one step handed on: the facts it wrote, what it reported, and the chain head when it set one. */
export interface StepOutput {
  readonly facts: Readonly<Record<string, unknown>>;
  readonly errors: readonly VerifyIssue[];
  readonly warnings: readonly VerifyIssue[];
  readonly notes: readonly VerifyIssue[];
  readonly chainHead?: string | null;
}

export const EVERY_STEP: VerifySteps = {run: (_name, _inputs, run) => run()};

/**
 * Run one check as a step of `steps`: it reports into `c` and writes into
 * `facts` as before; what it handed on (or the caller's answer for it) is
 * put back in the same place, so the findings keep their order.
 */
export function step(
  c: Findings,
  steps: VerifySteps,
  name: string,
  inputs: unknown,
  facts: object,
  check: () => void,
): void {
  const out = steps.run(`${c.store.scenario}: ${name}`, inputs, () => {
    const before = new Map(Object.entries(facts));
    const head = c.chainHead;
    const mark = c.mark();
    check();
    const wrote: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(facts)) if (!before.has(k) || before.get(k) !== v) wrote[k] = v;
    const output: StepOutput = {
      facts: wrote,
      errors: c.errors.splice(mark.errors),
      warnings: c.warnings.splice(mark.warnings),
      notes: c.notes.splice(mark.notes),
    };
    return c.chainHead === head ? output : {...output, chainHead: c.chainHead};
  });
  Object.assign(facts, out.facts);
  c.errors.push(...out.errors);
  c.warnings.push(...out.warnings);
  c.notes.push(...out.notes);
  if (out.chainHead !== undefined) c.chainHead = out.chainHead;
}
