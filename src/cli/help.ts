import {Help} from '@oclif/core/help';

const EXAMPLES = [
  [
    'Start a scenario from a folder of <kind>/<key>.<ext> files',
    'autoctx init --scenario support --from ./context/baseline',
  ],
  [
    'Propose a candidate whose parent is the active bundle',
    'autoctx propose --from ./context/candidate --rationale "shorter playbook"',
  ],
  ['See what serves and what waits', 'autoctx status'],
  ['Check every digest, schema and pointer (exit 8 on a problem)', 'autoctx verify --json'],
  ['Go back to the previous bundle', 'autoctx rollback --rationale "regression" --expect-active 6d9bc734'],
];

/** Root help with a few worked examples after the command list. */
export default class AutoctxHelp extends Help {
  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(this.section('EXAMPLES', EXAMPLES.map(([what, cmd]) => `${what}:\n  $ ${cmd}`).join('\n\n')));
    this.log(
      this.section(
        'EXIT CODES',
        '0 done · 1 bug · 2 bad input · 3 rejected · 4 needs more evidence · 5 held for audit · 6 a ' +
          'compare-and-swap lost (the active bundle moved) · 7 locked · 8 integrity failure · 9 the ' +
          'environment refused (no space, read-only, permission, open files) · 130 interrupted (Ctrl-C; 143 ' +
          'SIGTERM): what was recorded is kept, and the same command resumes',
      ),
    );
  }
}
