import * as Flags from '@oclif/core/flags';
import {describeStep, reconcile} from '../core/common/reconcile/reconcile.js';
import {SigningWritingCommand} from '../cli/base-command.js';
import {paint} from '../cli/style.js';
import {actorFlag} from '../cli/release-flags.js';

const revision = (description: string) => Flags.string({helpValue: 'REV', description});

export default class Reconcile extends SigningWritingCommand {
  static override summary = "Join two clones' knowledge histories after a git merge, through the gates.";
  static override description =
    "After a git merge of two clones' knowledge/ (with conflicts still in the index, or after a resolution " +
    "was committed): keeps one side's state (--keep, default ours: the branch merged into) and makes the " +
    "other side's promotions, rejections, rollbacks and epoch rollovers again on it, each through its " +
    "command's gate: a promotion whose parent no longer serves becomes a stale rejection, a rejection beats " +
    'a promotion of the same bundle, a rollback of a bundle that no longer serves is refused. Candidates the ' +
    'other side proposed or evaluated are taken as they stood before any decision. The result is built and ' +
    'verified outside the knowledge folder; only a tree that verifies replaces it, with one record per ' +
    'scenario of what became of each change (autoctx log shows it). --dry-run prints the plan and writes ' +
    'nothing. --scenario S reconciles that scenario alone (the others stay as the work tree holds them). After a ' +
    'rebase, name its two sides with --ours and --theirs.';
  static override examples = [
    '<%= config.bin %> reconcile --dry-run',
    '<%= config.bin %> reconcile && git add -A knowledge && git commit',
    '<%= config.bin %> reconcile --keep theirs',
    '<%= config.bin %> reconcile --ours main --theirs ORIG_HEAD',
  ];
  static override flags = {
    keep: Flags.string({
      options: ['ours', 'theirs'],
      description:
        'the side whose state stands (default ours: the branch ' +
        "merged into); the other side's changes are made again on it",
    }),
    base: revision("the commit both sides started from (default: git's merge base of the two)"),
    ours: revision('the kept-by-default side, when HEAD is not the merge (a rebase: its upstream)'),
    theirs: revision('the other side, when HEAD is not the merge (a rebase: ORIG_HEAD)'),
    'dry-run': Flags.boolean({description: 'print what would become of each change; write nothing'}),
    actor: actorFlag,
  };

  async run() {
    const {flags} = await this.parse(Reconcile);
    const r = await reconcile({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      keep: flags.keep,
      base: flags.base,
      ours: flags.ours,
      theirs: flags.theirs,
      dryRun: flags['dry-run'],
      actor: flags.actor,
      signingKey: flags['signing-key'],
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(r, () => {
      if (r.status === 'nothing') return ['nothing to reconcile: verify is clean and git is not merging'];
      const lines = [
        `kept ${r.kept.side} (${r.kept.commit.slice(0, 12)}), made ${r.other.side} (${r.other.commit.slice(0, 12)}) ` +
          `again on it; base ${r.base.slice(0, 12)}`,
      ];
      for (const s of r.scenarios) {
        lines.push(`${paint.bold(s.scenario)}: ${s.steps.length} change(s) from ${r.other.side}`);
        for (const step of s.steps) lines.push(`  ${describeStep(step)}`);
      }
      if (r.status === 'planned') lines.push(paint.yellow('dry run: nothing was written'));
      else lines.push(`${r.written.length} file(s) written, ${r.removed.length} removed; next: ${r.next}`);
      return lines;
    });
  }
}
