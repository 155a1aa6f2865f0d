import { spawnSync } from 'node:child_process';
import { findExecutable, REDIS_INSTALL_HINT } from '@frequency-gateway/devstack';

/**
 * Makes sure a redis-server binary exists: installs Debian's package when it is missing and this user can
 * (root, or password-less sudo), otherwise explains what to install. Returns false when it is still missing.
 */
export function ensureRedisServer(say: (line: string) => void): boolean {
  if (process.env.REDIS_SERVER_BIN || findExecutable('redis-server')) return true;
  const aptGet = findExecutable('apt-get');
  const asRoot = process.getuid?.() === 0;
  const sudo = !asRoot && findExecutable('sudo') && spawnSync('sudo', ['-n', 'true']).status === 0;
  if (!aptGet || (!asRoot && !sudo)) {
    say(`redis-server is not installed. ${REDIS_INSTALL_HINT} Or point REDIS_URL at a Redis you run.`);
    return false;
  }
  say('redis-server is not installed; installing Debian package redis-server…');
  const prefix = asRoot ? [] : ['sudo', '-n'];
  const run = (args: string[]) => {
    const [command, ...rest] = [...prefix, ...args];
    return (
      spawnSync(command as string, rest, {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      }).status === 0
    );
  };
  const installed =
    run(['apt-get', 'install', '-y', '--no-install-recommends', 'redis-server']) ||
    (run(['apt-get', 'update']) && run(['apt-get', 'install', '-y', '--no-install-recommends', 'redis-server']));
  if (!installed || !findExecutable('redis-server')) {
    say(`could not install redis-server. ${REDIS_INSTALL_HINT}`);
    return false;
  }
  return true;
}
