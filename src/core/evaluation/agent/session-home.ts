import path from 'node:path';
import {fail, isAutoctxError, rethrowUnless} from '../../../errors.js';
import {render} from '../../delivery/bootstrap.js';
import {hookEnable, hookInstall} from '../../delivery/hook-install.js';
import {currentSettings, editUserConfig} from '../../delivery/hook-settings.js';
import {writeConfigText} from '../../../store/io/config-files.js';
import {userConfigPath} from '../../../store/index.js';
import {copySmallTree, scratchFolder} from '../../../store/io/agent-files.js';
import type {AgentHost} from './hosts.js';
import {guardFolder} from './bounded-process.js';

/** The hook's budget in an arm's session: the most the configuration allows (a loaded machine must not drop it). */
const SESSION_BUDGET_MS = 4500;

/**
 * A clean home for the host with autoctx's hooks in it, installed by `hook install --user` itself (the host's user
 * settings, and the per-user configuration naming the tree and scenario, turned on), and nothing else: no settings,
 * memories or history of anyone's. Made once per evaluator process and scenario; each arm gets a copy.
 */
export class SessionHomes {
  private readonly made = new Map<string, string>();
  private readonly roots: string[] = [];
  private readonly deliverable = new Set<string>();

  constructor(
    private readonly host: AgentHost,
    private readonly knowledge: string,
  ) {}

  /** Copy the home for `scenario` to `home` (a folder that does not exist yet). */
  copyTo(scenario: string, home: string): void {
    let template = this.made.get(scenario);
    if (template === undefined) {
      const root = scratchFolder();
      guardFolder(root, true);
      this.roots.push(root);
      template = path.join(root, 'home');
      const env: NodeJS.ProcessEnv = {
        HOME: template,
        XDG_CONFIG_HOME: path.join(template, '.config'),
        CODEX_HOME: path.join(template, '.codex'),
      };
      const location = {user: true} as const;
      hookInstall({host: this.host, location, knowledge: this.knowledge, scenario, env});
      hookEnable({location, enabled: true, env});
      const settings = currentSettings(location, env)!;
      const config = userConfigPath(env);
      writeConfigText(config, editUserConfig(config, location, {...settings, budget_ms: SESSION_BUDGET_MS}), {
        private: true,
      });
      this.made.set(scenario, template);
    }
    copySmallTree(template, home);
  }

  /**
   * Check once per bundle that the tree can render the arm's package from it, as the pinned hook will: a session whose
   * hook cannot (the tree does not hold that bundle, say) would run without the arm's context and be scored as if it
   * had it, so that is an error before the host starts.
   */
  checkDeliverable(scenario: string, bundle: string): void {
    const key = `${scenario}\u0000${bundle}`;
    if (this.deliverable.has(key)) return;
    try {
      render({knowledge: this.knowledge, scenario, bundle});
    } catch (error) {
      rethrowUnless(error, isAutoctxError);
      fail(
        'EVALUATOR_FAILED',
        `the arm's bundle ${bundle} of scenario "${scenario}" cannot be delivered from ${this.knowledge} ` +
          `(${error.code}: ${error.message}); nothing was scored`,
      );
    }
    this.deliverable.add(key);
  }

  /** The templates' folders, for the caller to remove when it is done. */
  folders(): readonly string[] {
    return this.roots;
  }
}
