import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServer, waitUntil, webhookReceiverProgram, type ServerProcess } from '../src/index.js';

/** The process state letter of /proc/<pid>/stat: T when stopped by a signal. */
const stateOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
};

describe('a server process frozen with SIGSTOP', () => {
  let server: ServerProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
  });

  const start = async () => {
    const program = join(tmpdir(), `frozen-server-${process.pid}.mjs`);
    writeFileSync(program, await webhookReceiverProgram());
    server = await spawnServer([program], {}, { node: [], portVariable: 'PORT' });
    return server;
  };

  it('answers again once resumed', async () => {
    const frozen = await start();
    frozen.freeze();
    await waitUntil(async () => stateOf(frozen.pid) === 'T', 5_000, 'the process stopped');
    expect(stateOf(frozen.pid)).toBe('T');
    frozen.resume();
    const answer = await waitUntil(async () => (await fetch(`${frozen.url}/livez`)).status, 5_000, 'an answer');
    expect(answer).toBe(200);
  });

  it('still ends on a stop while frozen, as a failed test’s teardown stops it', async () => {
    const frozen = await start();
    frozen.freeze();
    await waitUntil(async () => stateOf(frozen.pid) === 'T', 5_000, 'the process stopped');
    // SIGTERM alone stays pending while the process is stopped; the stop continues it.
    expect(await frozen.stop()).toEqual({ code: 0, signal: null });
    expect(frozen.running()).toBe(false);
  });
});
