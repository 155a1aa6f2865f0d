// The scripts that start and stop the project's dockerd and the local cluster share one host. Two jest runs of
// `make test` start the dockerd at the same moment, and a clean-up can meet another one half-way: docker-up and
// docker-down take turns on one lock, and dropping an empty nftables table someone else dropped first is no failure.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, chmodSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@frequency-gateway/devstack';

const IMAGES_LIB = fileURLToPath(new URL('../../dev/images/lib.sh', import.meta.url));
const CLUSTER_LIB = fileURLToPath(new URL('../../dev/cluster/lib.sh', import.meta.url));

let scratch: string;
const started: ChildProcess[] = [];
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'host-scripts-'));
});
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

/** Whether process `pid` has a child named `name` (a command it waits on). */
const hasChild = (pid: number, name: string) => spawnSync('pgrep', ['-P', String(pid), '-x', name]).status === 0;

test('two holders of the dockerd lock take turns: the second waits until the first has exited', async () => {
  const log = join(scratch, 'log');
  const release = join(scratch, 'release');
  spawnSync('mkfifo', [release]);
  const env = { ...process.env, FG_DOCKER_EXEC_ROOT: join(scratch, 'exec-root'), FG_DOCKER_LOCKED: '' };
  const holder = (body: string) => {
    const child = spawn('bash', ['-c', `set -euo pipefail; source "${IMAGES_LIB}"; ${body}`], { env, stdio: 'ignore' });
    started.push(child);
    return child;
  };
  const lines = () => readFileSync(log, 'utf8').trim().split('\n');

  // The first holds the lock until the test writes to the fifo.
  const first = holder(
    `hold_docker_lock; echo "first in" >>"${log}"; read -r _ <"${release}"; echo "first out" >>"${log}"`,
  );
  await waitUntil(async () => lines().includes('first in'), 10_000, 'the first holder to take the lock');
  const second = holder(`echo "second waiting" >>"${log}"; hold_docker_lock; echo "second in" >>"${log}"`);
  // The second either waits in flock or (with no lock) is already in.
  await waitUntil(
    async () => lines().includes('second in') || (lines().includes('second waiting') && hasChild(second.pid!, 'flock')),
    10_000,
    'the second holder to wait for the lock',
  );
  expect(lines()).toEqual(['first in', 'second waiting']);

  writeFileSync(release, 'go\n');
  expect(await exited(first)).toBe(0);
  expect(await exited(second)).toBe(0);
  expect(lines()).toEqual(['first in', 'second waiting', 'first out', 'second in']);
});

test('a script already holding the lock (docker-up calling docker-down) does not wait for itself', () => {
  const env = { ...process.env, FG_DOCKER_EXEC_ROOT: join(scratch, 'exec-root'), FG_DOCKER_LOCKED: '' };
  const nested = spawnSync(
    'bash',
    [
      '-c',
      `set -euo pipefail; source "${IMAGES_LIB}"; hold_docker_lock; bash -c 'source "${IMAGES_LIB}"; hold_docker_lock; echo inner'`,
    ],
    { env, encoding: 'utf8', timeout: 10_000 },
  );
  expect(nested.status).toBe(0);
  expect(nested.stdout.trim()).toBe('inner');
});

describe('drop_empty_tables (in a network namespace of its own)', () => {
  /** Runs `script` in a new network namespace with the cluster library sourced and `nft` as found on `path`. */
  const inNamespace = (script: string, path = process.env.PATH ?? '') =>
    spawnSync('unshare', ['--net', 'bash', '-c', `set -euo pipefail; source "${CLUSTER_LIB}"; ${script}`], {
      env: { ...process.env, PATH: path },
      encoding: 'utf8',
      timeout: 20_000,
    });
  const emptyMangle =
    "nft add table ip mangle; nft add chain ip mangle PREROUTING '{ type filter hook prerouting priority mangle; policy accept; }'";

  test('drops an empty table and keeps one holding a rule', () => {
    const result = inNamespace(
      `${emptyMangle}; nft add table ip nat; nft add chain ip nat KEEP; drop_empty_tables; nft list tables`,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe('table ip nat');
  });

  test('a table another clean-up dropped between the listing and the deletion is no failure', () => {
    // An nft that lets "another clean-up" delete the table first, then deletes it itself (and fails: ENOENT).
    const shims = join(scratch, 'bin');
    mkdirSync(shims);
    const real = spawnSync('bash', ['-c', 'command -v nft'], { encoding: 'utf8' }).stdout.trim();
    writeFileSync(
      join(shims, 'nft'),
      `#!/bin/bash\nif [ "$1" = delete ]; then "${real}" "$@"; fi\nexec "${real}" "$@"\n`,
    );
    chmodSync(join(shims, 'nft'), 0o755);
    const result = inNamespace(
      `${emptyMangle}; drop_empty_tables; echo "tables: $(nft list tables)"`,
      `${shims}:${process.env.PATH}`,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe('tables:');
  });
});
