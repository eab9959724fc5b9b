import {signingKeyFlag} from '../../cli/release-flags.js';
import {WritingCommand} from '../../cli/base-command.js';
import {digestArg, sourceFlag} from '../../cli/flags.js';
import {paint, short} from '../../cli/style.js';
import {migrateEvidence} from '../../core/evaluation/migrate-evidence.js';

export default class TrialsMigrate extends WritingCommand {
  static override summary =
    "Migrate a terminal candidate's schema-1 evidence (written by the Python implementation) to schema 2 " +
    'under a given policy.';
  static override description =
    'The evidence is replayed under the policy first: only when that reproduces the recorded comparison ' +
    'and the terminal lifecycle (confirmed or rejected) are matched_trials.json (the same trials), its ' +
    "seal and the record's policy written. A confirmed candidate can then be promoted. Legacy rows that " +
    'collapse to one pair identity are refused. Evidence already in schema 2 is left as it is.';
  static override examples = ['<%= config.bin %> trials migrate 6d9bc734 --policy policy.json'];
  static override args = {candidate: digestArg('the candidate', 'Candidate bundle digest or a unique prefix.')};
  static override flags = {
    'signing-key': signingKeyFlag,
    policy: sourceFlag('policy', {
      summary: 'The confirmation policy the evidence was recorded under (JSON; missing fields take the defaults).',
      required: true,
    }),
  };

  async run() {
    const {args, flags} = await this.parse(TrialsMigrate);
    const r = await migrateEvidence({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      candidate: args.candidate,
      policyFile: flags.policy,
      lockTimeout: flags['lock-timeout'],
      signingKey: flags['signing-key'],
    });
    return this.done(r, () => [
      r.status === 'migrated'
        ? `${paint.green('migrated')} ${short(r.candidate_digest)}: ${r.trials} trials to schema 2 under ` +
          `policy ${short(r.confirmation_policy_digest)}, after a replay that reproduced its ${r.lifecycle} ` +
          `record${r.bit_exact ? ' bit for bit' : ' within the cross-runtime tolerance'}`
        : `${short(r.candidate_digest)}'s evidence is already schema 2; nothing was written`,
    ]);
  }
}
