import * as Args from '@oclif/core/args';
import {SigningWritingCommand} from '../../cli/base-command.js';
import {actorFlag, listFlag, scopeFlag} from '../../cli/release-flags.js';
import {short} from '../../cli/style.js';
import {releaseName} from '../../core/release/release-name.js';
import * as Flags from '@oclif/core/flags';

export default class ReleaseName extends SigningWritingCommand {
  static override summary = 'Give a bundle a release name: an immutable descriptor.';
  static override description =
    'Names use A-Z a-z 0-9 . _ - and are compared case-insensitively: a name equal to an existing one ' +
    'under case folding is refused, as is a second name for the same bundle. Every rollback target must ' +
    'be a release whose bundle has served in the scope (a recorded pointer move made it active). Golden ' +
    'inputs are fixtures files, recorded by digest.';
  static override examples = [
    '<%= config.bin %> release name v20 6d9bc734',
    '<%= config.bin %> release name v21 9fe14ef5 --parent-version v20 --rollback-target v20 ' +
      '--vocabulary-version dict-3 --compatible-vocabulary dict-2 --model-profile fast --golden-inputs ' +
      'fixtures.jsonl',
  ];
  static override args = {
    version: Args.string({description: 'The release name.', required: true}),
    digest: Args.string({description: 'The bundle (digest or unique prefix).', required: true}),
  };
  static override flags = {
    'parent-version': Flags.string({summary: 'The release this one follows.', helpValue: 'V'}),
    'rollback-target': listFlag('Releases this one may be rolled back to (each must have served).', 'V'),
    'vocabulary-version': Flags.string({summary: 'The vocabulary version the bundle is written for.', helpValue: 'X'}),
    'compatible-vocabulary': listFlag('Vocabulary versions it also works with.', 'X'),
    'model-profile': listFlag('Model profiles it is declared for.', 'P'),
    'golden-inputs': listFlag('Fixtures files (JSON lines) recorded by digest.', 'FIXTURES_FILE'),
    scope: scopeFlag,
    actor: actorFlag,
  };

  async run() {
    const {args, flags} = await this.parse(ReleaseName);
    const result = await releaseName({
      knowledge: flags.knowledge,
      signingKey: flags['signing-key'],
      scenario: flags.scenario,
      version: args.version,
      digest: args.digest,
      parentVersion: flags['parent-version'],
      rollbackTargets: flags['rollback-target'],
      vocabularyVersion: flags['vocabulary-version'],
      compatibleVocabularies: flags['compatible-vocabulary'],
      modelProfiles: flags['model-profile'],
      goldenInputs: flags['golden-inputs'],
      scope: flags.scope,
      actor: flags.actor,
      lockTimeout: flags['lock-timeout'],
    });
    return this.done(result, () => [
      `${result.already_named ? 'already named' : 'named'} ${result.version} = ` +
        `${short(result.bundle_digest)}` +
        (result.descriptor.rollback_targets.length
          ? ` (rollback to ${result.descriptor.rollback_targets.join(', ')})`
          : ''),
    ]);
  }
}
