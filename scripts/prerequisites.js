#!/usr/bin/env node
// What the example and the tests need beyond npm's packages, installed when it is missing.
// The browser for the report test comes inside an npm package (@sparticuz/chromium); OpenSSH's
// ssh-keygen (signing) and git (the clone test) come from the system: on a Debian-like machine as
// root they are installed here with apt-get; elsewhere one line says what to install, and the run stops.
import {spawnSync} from 'node:child_process';

const needs = [
  {command: 'ssh-keygen', args: ['-?'], debian: 'openssh-client', what: 'OpenSSH ssh-keygen (signing)'},
  {command: 'git', args: ['--version'], debian: 'git', what: 'git (the fresh-clone test)'},
];
const present = (n) => {
  const r = spawnSync(n.command, n.args, {stdio: 'ignore'});
  return !r.error;
};
const missing = needs.filter((n) => !present(n));
if (missing.length === 0) process.exit(0);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const apt = spawnSync('apt-get', ['--version'], {stdio: 'ignore'});
if (isRoot && !apt.error) {
  const pkgs = missing.map((n) => n.debian);
  process.stderr.write(`autoctx: installing ${pkgs.join(', ')} with apt-get\n`);
  const env = {...process.env, DEBIAN_FRONTEND: 'noninteractive'};
  const update = spawnSync('apt-get', ['update', '-qq'], {stdio: 'inherit', env});
  const install = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], {
    stdio: 'inherit',
    env,
  });
  if (update.status === 0 && install.status === 0 && missing.every(present)) process.exit(0);
}
for (const n of missing.filter((m) => !present(m))) {
  process.stderr.write(
    `autoctx: ${n.what} is needed and missing: install the package ${n.debian} (apt-get install ` +
      `${n.debian}), then run again\n`,
  );
}
process.exit(1);
