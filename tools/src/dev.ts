// `make dev`: the whole gateway on one machine. Starts Redis (unless REDIS_URL is given) and every component
// as its own process, prefixes their output, prints the URLs once everything is ready, restarts the components a
// saved source file belongs to (tools/src/dev/reloads.ts; not with --no-watch or DEV_WATCH=0), and stops it all
// on Ctrl-C. --root DIR runs and watches the sources of another copy of the repository (the reload test's).
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { LOOPBACK_DESTINATIONS } from '@frequency-gateway/platform';
import { EmbeddedStore, serveGateway, type GatewayServer } from '@frequency-gateway/storage';
import { COMPONENTS, repositoryRoot } from './components.js';
import { launch, waitUntilReady, type Running } from './dev/componentProcess.js';
import { Reloads } from './dev/reloads.js';
import { ensureRedisServer } from './redisProvision.js';

const { values: args } = parseArgs({
  options: {
    'port-offset': { type: 'string', default: process.env.DEV_PORT_OFFSET ?? '0' },
    'no-watch': { type: 'boolean', default: process.env.DEV_WATCH === '0' },
    root: { type: 'string', default: repositoryRoot },
  },
});
const portOffset = Number(args['port-offset']);
const sourceRoot = resolve(args.root);
const tty = process.stdout.isTTY === true;
const COLOURS = [36, 33, 35, 32, 34, 91];
const paint = (code: number, text: string) => (tty ? `\u001b[${code}m${text}\u001b[0m` : text);
const width = Math.max(...COMPONENTS.map((c) => c.name.length), 'dev'.length);
const colourOf = new Map(COMPONENTS.map((component, index) => [component.name, COLOURS[index % COLOURS.length]!]));
/** One line of a component's output (or the runner's, as `dev`), prefixed with its name. */
const print = (name: string, line: string) =>
  process.stdout.write(`${paint(colourOf.get(name) ?? 1, name.padEnd(width))} | ${line}\n`);
const say = (line: string) => print('dev', line);

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
    // Dependency checks every half second (2 s by default): a component a reload restarts is ready within half a
    // second of reaching the chain.
    READINESS_INTERVAL_MS: process.env.READINESS_INTERVAL_MS ?? '500',
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
  const all = COMPONENTS.map((component) =>
    launch(component, sourceRoot, component.defaultPort + portOffset, env, print),
  );
  const reloads = args['no-watch'] ? undefined : new Reloads({ root: sourceRoot, all, env, print, say, adopt: report });
  const ipfsLine = ipfs ? ipfs.gateway.url : process.env.IPFS_ENDPOINT;

  let stopping = false;
  const stop = async (reason: string) => {
    if (stopping) return;
    stopping = true;
    say(`${reason}: stopping every component…`);
    await reloads?.close();
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
  function report(running: Running): void {
    void running.exited.then((code) => {
      if (!stopping && !running.replaced)
        say(`${running.component.name} exited unexpectedly (code ${code}); the others keep running.`);
    });
  }
  for (const running of all) report(running);

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
  if (reloads) {
    reloads.start();
    const elsewhere = sourceRoot === resolve(repositoryRoot) ? '' : ` in ${sourceRoot}`;
    say(`watching services/*/src and shared/*/src${elsewhere}: a saved file restarts the components that run it`);
  }
}

await main();
