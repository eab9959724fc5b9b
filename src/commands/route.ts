import * as Flags from '@oclif/core/flags';
import {ScenarioCommand} from '../cli/base-command.js';
import {scopeFlag} from '../cli/release-flags.js';
import {short} from '../cli/style.js';
import {route} from '../core/release/route.js';

export default class Route extends ScenarioCommand {
  static override summary =
    "Which bundle serves one request: the canary's for a requester in its share, else the scope's ACTIVE.";
  static override description =
    'The requester is the user, else the session, else the event; a stable hash of it, salted by scope, ' +
    'scenario and canary release, decides canary membership (never at random; with no requester the ' +
    'request is outside the canary). Tenant and resource filters narrow a canary. A canary this ' +
    'deployment cannot run falls back to ACTIVE. docs/releases.md gives the algorithm; ' +
    'docs/vectors/routing.v1.json pins it.';
  static override examples = [
    '<%= config.bin %> route --user alice',
    '<%= config.bin %> route --scope eu --session s-42 --tenant acme --json',
  ];
  static override flags = {
    scope: scopeFlag,
    user: Flags.string({summary: 'The user (the requester when given).', helpValue: 'U'}),
    session: Flags.string({summary: 'The session (the requester when no user is given).', helpValue: 'ID'}),
    event: Flags.string({summary: 'The event (the requester when neither is given).', helpValue: 'E'}),
    tenant: Flags.string({summary: 'The tenant, for a tenant-filtered canary.', helpValue: 'T'}),
    'resource-address': Flags.string({
      summary: "The resource address, matched by prefix against a canary's resource families.",
      helpValue: 'A',
    }),
    'resource-id': Flags.string({
      summary: "The resource id, matched exactly against a canary's resource families.",
      helpValue: 'R',
    }),
  };

  async run() {
    const {flags} = await this.parse(Route);
    const result = route({
      knowledge: flags.knowledge,
      scenario: flags.scenario,
      scope: flags.scope,
      user: flags.user,
      session: flags.session,
      event: flags.event,
      tenant: flags.tenant,
      resourceAddress: flags['resource-address'],
      resourceId: flags['resource-id'],
    });
    return this.done(result, () => [
      `${result.state} ${result.version ?? 'unnamed'} (${short(result.bundle_digest)}) in ${result.scope}: ` +
        `${result.reason}${result.bucket !== null ? `, bucket ${result.bucket} of 10000` : ''}`,
      ...result.not_runnable.map((v) => `  canary ${v} is not runnable here: passed over`),
      ...(result.registry_problem ? [`  the registry is not used: ${result.registry_problem}`] : []),
    ]);
  }
}
