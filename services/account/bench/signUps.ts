// Sign-up benchmark on a devchain with 6-second blocks: BENCH_SIGNUPS (2,000) new users, each with a real SIWF
// response (addProvider, claimHandle, itemActions and a login, sr25519), posted all at once. Reported: the time
// from the first POST until every SUCCESS webhook has arrived (also in block times), the transactions used,
// and the POST latency (p50, p99) next to same-run baselines on the same api at the same concurrency: GET /livez,
// and an account look-up (one chain read). Printed, and written to docs/measurements/account-sign-ups.json.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import {
  capacityMeter,
  cpuSeconds,
  redisTraffic,
  topCommands,
  trafficPer,
  type BenchmarkFigure,
  writeBenchmarkResult,
} from '@frequency-gateway/devstack';
import { encodeAuthorizationPayload, SiwfUser } from '@frequency-gateway/devstack/siwf';
import { startAccountStack } from '../test/support/stack.js';

const SIGNUPS = Number(process.env.BENCH_SIGNUPS ?? 2_000);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 6_000);

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(52)}${value}\n`);
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};

/** Sends every request at once; returns each one's latency in ms and status. */
async function burst(requests: (() => Promise<Response>)[]): Promise<{ ms: number[]; statuses: number[] }> {
  const results = await Promise.all(
    requests.map(async (send) => {
      const started = performance.now();
      const response = await send();
      await response.arrayBuffer();
      return { ms: performance.now() - started, status: response.status };
    }),
  );
  return { ms: results.map((result) => result.ms), statuses: results.map((result) => result.status) };
}

await cryptoWaitReady();
const stack = await startAccountStack({
  blockTimeMs: BLOCK_MS,
  finalityLag: 1,
  workerEnv: { WEBHOOK_CONCURRENCY: '50', LOG_LEVEL: 'error' },
  apiEnv: { LOG_LEVEL: 'error' },
  // BENCH_API_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the api (Node refuses them in NODE_OPTIONS).
  apiNodeArgs: (process.env.BENCH_API_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  workerNodeArgs: (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
  // As the image runs them (compiled JavaScript) when they have been built, else from their sources.
  compiled: existsSync(fileURLToPath(new URL('../dist/main.js', import.meta.url))),
});
try {
  const bodies: string[] = [];
  for (let index = 0; index < SIGNUPS; index++) {
    const user = SiwfUser.create('sr25519');
    const response = await stack.signUpOf(user, { handle: `bench${index}` });
    bodies.push(JSON.stringify({ authorizationPayload: encodeAuthorizationPayload(response) }));
  }
  // Same-run baselines at the same concurrency: the api's cheapest route, and a route that makes one chain read
  // (a sign-in makes three: the handle check, the account look-up, and the intents on first use).
  const baseline = await burst(bodies.map(() => () => fetch(`${stack.api.url}/livez`)));
  const chainRead = await burst(
    bodies.map(
      () => () => fetch(`${stack.api.url}/v1/accounts/account/5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY`),
    ),
  );

  const capacitySpent = await capacityMeter(stack.chain.api, 1);
  // CPU each process spends from the first POST to the last webhook, and what Redis serves.
  const processes: [string, number][] = [
    ['api', stack.api.pid],
    ['worker', (stack.workers[0] as { pid: number }).pid],
    ['Redis', stack.redis.pid() as number],
  ];
  const cpuBefore = processes.map(([, pid]) => cpuSeconds(pid));
  const trafficBefore = await redisTraffic(stack.redis.url);
  const started = performance.now();
  const posts = await burst(
    bodies.map(
      (body) => () =>
        fetch(`${stack.api.url}/v2/accounts/siwf`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
    ),
  );
  const accepted = posts.statuses.filter((status) => status === 200).length;
  await stack.receiver.waitFor(accepted, 30 * 60_000);
  const elapsed = performance.now() - started;
  const cpuPerSignUp = processes.map(
    ([name, pid], index) => [name, ((cpuSeconds(pid) - (cpuBefore[index] as number)) / SIGNUPS) * 1e6] as const,
  );
  const traffic = trafficPer(trafficBefore, await redisTraffic(stack.redis.url), SIGNUPS);
  const deliveries = stack.receiver.received.map((delivery) => delivery.body as { status: string; txHash: string });
  const succeeded = deliveries.filter((body) => body.status === 'SUCCESS').length;
  const transactions = new Set(deliveries.map((body) => body.txHash)).size;
  const capacity = await capacitySpent();

  line('sign-ups posted at once', String(SIGNUPS));
  line('accepted (200)', String(accepted));
  line('SUCCESS webhooks', `${succeeded} of ${deliveries.length}`);
  line(
    'first POST → last webhook',
    `${(elapsed / 1000).toFixed(1)} s (${(elapsed / BLOCK_MS).toFixed(1)} block times)`,
  );
  line('transactions used', `${transactions} (${(transactions / Math.max(1, succeeded)).toFixed(2)} per sign-up)`);
  line('CPU per sign-up (µs)', cpuPerSignUp.map(([name, us]) => `${name} ${us.toFixed(0)}`).join(', '));
  line(
    'Redis per sign-up: commands, bytes in/out',
    `${traffic.commands.toFixed(1)}, ${traffic.bytesIn.toFixed(0)}/${traffic.bytesOut.toFixed(0)}`,
  );
  line('  the most frequent', topCommands(traffic));
  line('POST latency p50 / p99', `${percentile(posts.ms, 50).toFixed(0)} / ${percentile(posts.ms, 99).toFixed(0)} ms`);
  line(
    'baseline GET /livez p50 / p99 (same burst)',
    `${percentile(baseline.ms, 50).toFixed(0)} / ${percentile(baseline.ms, 99).toFixed(0)} ms`,
  );
  line(
    'baseline GET /v1/accounts/account/{key} p50 / p99',
    `${percentile(chainRead.ms, 50).toFixed(0)} / ${percentile(chainRead.ms, 99).toFixed(0)} ms`,
  );
  line('POST p99 / GET /livez p99', (percentile(posts.ms, 99) / percentile(baseline.ms, 99)).toFixed(1));
  line('POST p99 / one-chain-read GET p99', (percentile(posts.ms, 99) / percentile(chainRead.ms, 99)).toFixed(1));

  const LIVEZ = 'baseline: GET /livez p99 (same burst)';
  const CHAIN_READ = 'baseline: GET /v1/accounts/account/{key} p99 (one chain read)';
  const round = (value: number, digits = 0) => Number(value.toFixed(digits));
  const figures: BenchmarkFigure[] = [
    { name: 'accepted (200)', value: accepted, unit: `of ${SIGNUPS} sign-ups` },
    { name: 'SUCCESS webhooks', value: succeeded, unit: `of ${deliveries.length} webhooks` },
    { name: 'first POST → last webhook', value: round(elapsed / 1000, 1), unit: 's' },
    { name: 'first POST → last webhook, in block times', value: round(elapsed / BLOCK_MS, 1), unit: 'block times' },
    { name: 'transactions per sign-up', value: round(transactions / Math.max(1, succeeded), 2), unit: 'transactions' },
    // Unmeasured when the provider's Capacity was replenished (a new epoch) during the run.
    ...(capacity === undefined || transactions === 0
      ? []
      : [
          {
            name: 'Capacity per transaction',
            value: round(Number(capacity) / transactions),
            unit: 'planck of Capacity',
          },
        ]),
    ...cpuPerSignUp.map(([name, us]) => ({ name: `CPU per sign-up: ${name}`, value: round(us), unit: 'µs' })),
    // Scripts' own commands count.
    { name: 'Redis commands per sign-up', value: round(traffic.commands, 1), unit: 'commands' },
    { name: 'Redis bytes in per sign-up', value: round(traffic.bytesIn), unit: 'bytes' },
    { name: 'Redis bytes out per sign-up', value: round(traffic.bytesOut), unit: 'bytes' },
    { name: 'peak RSS: api', value: round(stack.api.memory().peak / 2 ** 20), unit: 'MiB' },
    {
      name: 'peak RSS: worker',
      value: round((stack.workers[0] as typeof stack.api).memory().peak / 2 ** 20),
      unit: 'MiB',
    },
    { name: 'POST latency p50', value: round(percentile(posts.ms, 50)), unit: 'ms' },
    { name: 'POST latency p99', value: round(percentile(posts.ms, 99)), unit: 'ms', baseline: LIVEZ },
    { name: LIVEZ, value: round(percentile(baseline.ms, 99)), unit: 'ms' },
    { name: CHAIN_READ, value: round(percentile(chainRead.ms, 99)), unit: 'ms' },
    {
      name: 'POST p99 / GET /livez p99',
      value: round(percentile(posts.ms, 99) / percentile(baseline.ms, 99), 1),
      unit: '×',
      baseline: LIVEZ,
    },
    {
      name: 'POST p99 / one-chain-read GET p99',
      value: round(percentile(posts.ms, 99) / percentile(chainRead.ms, 99), 1),
      unit: '×',
      baseline: CHAIN_READ,
    },
  ];
  const written = writeBenchmarkResult({
    benchmark: 'account-sign-ups',
    title: 'Account: SIWF sign-ups posted at once',
    figures,
    notes: [
      `${SIGNUPS} new users (BENCH_SIGNUPS), each a SIWF response with addProvider, claimHandle, itemActions and a ` +
        `login (sr25519), posted all at once; a devchain with ${BLOCK_MS} ms blocks (BENCH_BLOCK_MS).`,
    ],
  });
  line('result', written);
} finally {
  await stack.stop();
}
