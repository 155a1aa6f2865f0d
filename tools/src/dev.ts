// `make dev`: the whole gateway on one machine. Starts Redis (unless REDIS_URL is given) and every component
// as its own process, prefixes their output, prints the URLs once everything is ready, and stops it all on Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';
import { EmbeddedStore, serveGateway, type GatewayServer } from '@frequency-gateway/storage';
import { COMPONENTS, repositoryRoot, type ComponentEntry } from './components.js';
import { ensureRedisServer } from './redisProvision.js';

const { values: args } = parseArgs({
  options: { 'port-offset': { type: 'string', default: process.env.DEV_PORT_OFFSET ?? '0' } },
});
const portOffset = Number(args['port-offset']);
const tty = process.stdout.isTTY === true;
const COLOURS = [36, 33, 35, 32, 34, 91];
const paint = (code: number, text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
const width = Math.max(...COMPONENTS.map((c) => c.name.length), 'dev'.length);
const say = (line: string) => process.stdout.write(`${paint(1, 'dev'.padEnd(width))} | ${line}\n`);

interface Running {
  component: ComponentEntry;
  port: number;
  child: ChildProcess;
  exited: Promise<number | null>;
}

function launch(component: ComponentEntry, index: number, env: NodeJS.ProcessEnv): Running {
  const port = component.defaultPort + portOffset;
  const main = join(repositoryRoot, 'services', component.service, 'src', 'main.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=source', main, component.role], {
    cwd: repositoryRoot,
    env: { ...env, [component.portVariable]: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const label = paint(COLOURS[index % COLOURS.length] as number, component.name.padEnd(width));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream! }).on('line', (line) => process.stdout.write(`${label} | ${line}\n`));
  }
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { component, port, child, exited };
}

async function waitUntilReady(running: Running, deadline: number): Promise<boolean> {
  while (Date.now() < deadline && running.child.exitCode === null) {
    const ready = await fetch(`http://127.0.0.1:${running.port}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

function printUrls(all: Running[], redisUrl: string, chainUrl: string, ipfsUrl: string | undefined): void {
  say('');
  say(paint(1, 'The gateway is up:'));
  for (const { component, port } of all) {
    const base = `http://localhost:${port}`;
    const extras = component.role === 'api' ? `  docs ${base}/docs/swagger  queues ${base}/queues` : '';
    say(`  ${component.name.padEnd(width)}  ${base}  ready ${base}/readyz  metrics ${base}/metrics${extras}`);
  }
  say(`  ${'redis'.padEnd(width)}  ${redisUrl.replace(/\/\/[^@]*@/, '//')}`);
  say(`  ${'chain'.padEnd(width)}  ${chainUrl}  (polkadot.js apps: ?rpc=${encodeURIComponent(chainUrl)})`);
  if (ipfsUrl) say(`  ${'ipfs'.padEnd(width)}  ${ipfsUrl.replace(/\/\/[^@]*@/, '//')}`);
  say('Press Ctrl-C to stop everything.');
}

async function main(): Promise<void> {
  const started = Date.now();
  let redis: LocalRedis | undefined;
  let redisUrl = process.env.REDIS_URL;
  if (!redisUrl) {
    if (!ensureRedisServer(say)) process.exit(1);
    const dir = join(repositoryRoot, '.dev', `redis-${portOffset}`);
    mkdirSync(dir, { recursive: true });
    redis = await startRedisServer({ dir });
    redisUrl = redis.url;
    say(`redis-server started on port ${redis.port}`);
  }
  let devchain: Devchain | undefined;
  let chainUrl = process.env.FREQUENCY_API_WS_URL;
  if (!chainUrl) {
    devchain = await startDevchain({ port: 9944 + portOffset, sealing: 'instant' });
    chainUrl = devchain.url;
    say(`devchain started on ${chainUrl} (instant sealing)`);
  }
  // Without IPFS_ENDPOINT, the components share an embedded content store in .dev, served at /ipfs/{cid}.
  let ipfs: { store: EmbeddedStore; gateway: GatewayServer; dir: string } | undefined;
  if (!process.env.IPFS_ENDPOINT) {
    const dir = join(repositoryRoot, '.dev', `ipfs-${portOffset}`);
    const store = new EmbeddedStore(dir);
    ipfs = { store, dir, gateway: await serveGateway(store, { port: 8080 + portOffset }) };
    say(`embedded IPFS store in ${dir}, gateway on ${ipfs.gateway.url}`);
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redisUrl,
    FREQUENCY_API_WS_URL: chainUrl,
    // The devchain's provider: //Alice controls MSA 1.
    PROVIDER_ID: process.env.PROVIDER_ID ?? '1',
    PROVIDER_ACCOUNT_SEED_PHRASE: process.env.PROVIDER_ACCOUNT_SEED_PHRASE ?? '//Alice',
    ...(ipfs ? { IPFS_EMBEDDED_DIR: ipfs.dir, IPFS_GATEWAY_URL: `${ipfs.gateway.url}/ipfs/[CID]` } : {}),
    ENVIRONMENT: process.env.ENVIRONMENT ?? 'dev',
    // Sign-ins from a front end on this machine (a login message whose URI is on localhost).
    SIWF_V2_URI_VALIDATION: process.env.SIWF_V2_URI_VALIDATION ?? 'localhost',
    // The devchain has no sign-in service of its own: sign-in requests point at the testnet's.
    SIWF_V2_URL: process.env.SIWF_V2_URL ?? 'https://testnet.frequencyaccess.com/siwa',
    // Webhook receivers of a developer run on this machine: open its loopback interface to the outbound policy.
    OUTBOUND_ALLOWED_DESTINATIONS: process.env.OUTBOUND_ALLOWED_DESTINATIONS ?? LOOPBACK_DESTINATIONS,
    LOG_PRETTY: process.env.LOG_PRETTY ?? String(tty),
    ...(tty ? { FORCE_COLOR: '1' } : {}),
  };
  const opened = env.OUTBOUND_ALLOWED_DESTINATIONS || '(nothing)';
  say(
    env.OUTBOUND_POLICY === 'allowlist'
      ? `webhooks may go only to ${opened} (OUTBOUND_POLICY=allowlist)`
      : `webhooks may go to public addresses and ${opened} (OUTBOUND_ALLOWED_DESTINATIONS)`,
  );
  const all = COMPONENTS.map((component, index) => launch(component, index, env));
  const ipfsLine = ipfs ? ipfs.gateway.url : process.env.IPFS_ENDPOINT;

  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    say(`${reason}: stopping every component…`);
    for (const running of all) running.child.kill('SIGTERM');
    const codes = await Promise.all(all.map((running) => running.exited));
    await redis?.stop();
    await devchain?.close();
    await ipfs?.gateway.close();
    await ipfs?.store.close();
    const failed = all.filter((_, i) => codes[i] !== 0 && codes[i] !== null).map((r) => r.component.name);
    say(failed.length === 0 ? 'stopped.' : `stopped; ${failed.join(', ')} exited with an error.`);
    process.exit(failed.length === 0 ? 0 : 1);
  };
  process.on('SIGINT', () => void stop('Ctrl-C'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  for (const running of all) {
    void running.exited.then((code) => {
      if (!stopping) say(`${running.component.name} exited unexpectedly (code ${code}); the others keep running.`);
    });
  }

  // A loaded machine can take more than a minute to compile and start six components: say who is late, then go on
  // waiting; the URLs are printed once every component is ready.
  const notReady = (ready: boolean[]) =>
    all
      .filter((_, i) => !ready[i])
      .map((r) =>
        r.child.exitCode === null ? r.component.name : `${r.component.name} (exited with ${r.child.exitCode})`,
      );
  let deadline = Date.now() + 60_000;
  let ready = await Promise.all(all.map((running) => waitUntilReady(running, deadline)));
  while (!stopping && !ready.every(Boolean) && all.some((r) => r.child.exitCode === null)) {
    say(`not ready after ${Math.round((Date.now() - started) / 1000)} s: ${notReady(ready).join(', ')}; still waiting`);
    deadline = Date.now() + 60_000;
    ready = await Promise.all(all.map((running, i) => (ready[i] ? true : waitUntilReady(running, deadline))));
  }
  if (stopping) return;
  if (ready.every(Boolean)) printUrls(all, redisUrl, chainUrl, ipfsLine);
  else say(`not ready: ${notReady(ready).join(', ')}`);
}

await main();
