// `make dev` as the suites run it: tools/src/dev.ts on ports shifted by a free offset, its output kept line by line.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The ports make dev takes at offset 0: the six components, the devchain and the IPFS gateway. */
export const DEV_PORTS = {
  'account-api': 3013,
  'account-worker': 3023,
  'content-publishing-api': 3010,
  'content-publishing-worker': 3020,
  'content-watcher-api': 3011,
  'content-watcher-worker': 3021,
  devchain: 9944,
  ipfs: 8080,
} as const;

export type DevComponent = Exclude<keyof typeof DEV_PORTS, 'devchain' | 'ipfs'>;

export const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer().once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });

async function freeOffset(): Promise<number> {
  for (;;) {
    // Below the kernel's ephemeral range (32768 and up), where the free ports other suites pick come from: a
    // port checked free here cannot be taken by another test's process before the component binds it.
    const offset = 10_000 + Math.floor(Math.random() * 12_000);
    const free = await Promise.all(Object.values(DEV_PORTS).map((port) => portIsFree(port + offset)));
    if (free.every(Boolean)) return offset;
  }
}

export interface DevRunner {
  offset: number;
  /** Every line it printed so far. */
  output: string[];
  exited: Promise<number | null>;
  /** http://127.0.0.1:<port> of a component. */
  base: (component: DevComponent) => string;
  /** Resolves once every component is ready ("The gateway is up"); rejects if it gives up or exits first. */
  up: Promise<void>;
  /** Ctrl-C. */
  interrupt: () => void;
}

/** Starts `make dev`'s runner with `args` (besides --port-offset), without the developer's Redis, chain or policy. */
export async function startDevRunner(args: string[] = []): Promise<DevRunner> {
  const offset = await freeOffset();
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const env = { ...process.env };
  delete env.REDIS_URL;
  delete env.FREQUENCY_API_WS_URL;
  delete env.OUTBOUND_ALLOWED_DESTINATIONS;
  delete env.OUTBOUND_POLICY;
  const runner = spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=source', 'tools/src/dev.ts', '--port-offset', String(offset), ...args],
    { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => runner.once('exit', resolve));
  const up = new Promise<void>((resolve, reject) => {
    createInterface({ input: runner.stdout! }).on('line', (line) => {
      output.push(line);
      if (line.includes('The gateway is up')) resolve();
      // "not ready after N s: …; still waiting" is a progress line on a loaded machine; "not ready: …" is the end.
      if (line.includes('not ready:')) reject(new Error(line));
    });
    void exited.then((code) => reject(new Error(`dev runner exited (${code}): ${output.slice(-10).join('\n')}`)));
  });
  return {
    offset,
    output,
    exited,
    base: (component) => `http://127.0.0.1:${DEV_PORTS[component] + offset}`,
    up,
    interrupt: () => runner.kill('SIGINT'),
  };
}
