// Soak benchmark (`make bench-soak`): the whole gateway as local processes (six components, a devchain with
// 6-second interval blocks, redis-server, Kubo) for BENCH_SOAK_MINUTES (30). Intake saturation is measured first in
// the same run (BENCH_SOAK_SATURATION_SECONDS of broadcasts from 64 connections), then broadcasts are posted at a
// steady half of it, with a SIWF sign-up every BENCH_SOAK_SIGNUP_EVERY_SECONDS and the content watcher delivering
// every broadcast to a registered webhook. Request records, batch memberships and completed jobs are kept for
// BENCH_SOAK_RETENTION_SECONDS (REQUEST_STATUS_TTL_SECONDS; see docs/redis.md), so that Redis must
// be flat once that window has passed. Sampled each minute: each component's RSS, Redis used_memory and its keys;
// every 5 seconds: each component's RSS and V8 heap in use (its /metrics). Reported: each component's memory slope
// after the warm-up (MiB per 10 minutes; goal < 1) through the floor of each 5-minute window (the lowest RSS and
// heap in it: what stays after the collector ran, where the minute samples swing with it by hundreds of MiB),
// next to the least-squares slope of the minute samples; Redis memory and keys per minute and their slope after
// the retention window; and p99 request → finalized (the POST to its SUCCESS webhook) in block times per 5-minute
// window (goal ≤ 3). Printed, and the headline figures written to docs/measurements/soak.json.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { Redis } from 'ioredis';
import { dsnpUsers, type BenchmarkFigure, writeBenchmarkResult } from '@frequency-gateway/devstack';
import { GatewayClient, LOGIN_URI } from '../src/clients/gatewayClient.js';
import { startLocalGateway } from '@frequency-gateway/devstack/gateway';

const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 30);
const BLOCK_MS = Number(process.env.BENCH_BLOCK_MS ?? 6_000);
const RETENTION_SECONDS = Number(process.env.BENCH_SOAK_RETENTION_SECONDS ?? 600);
const WARM_UP_MINUTES = Number(process.env.BENCH_SOAK_WARM_UP_MINUTES ?? 5);
const SATURATION_SECONDS = Number(process.env.BENCH_SOAK_SATURATION_SECONDS ?? 10);
const SIGNUP_EVERY_MS = Number(process.env.BENCH_SOAK_SIGNUP_EVERY_SECONDS ?? 10) * 1000;
const WINDOW_MS = 5 * 60_000;
const SAMPLE_MS = Number(process.env.BENCH_SOAK_SAMPLE_SECONDS ?? 60) * 1000;
const MEMORY_SAMPLE_MS = 5_000;
const FLOOR_MINUTES = Number(process.env.BENCH_SOAK_FLOOR_MINUTES ?? 5);
const MAX_IN_FLIGHT = 256;
const MiB = 1024 * 1024;

const say = (line: string) => process.stdout.write(`${line}\n`);
const line = (name: string, value: string) => say(`${name.padEnd(57)} ${value}`);
const percentile = (values: number[], p: number) => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
};
/** Least-squares slope of y over x. */
const slope = (points: [number, number][]) => {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  const sxy = points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0);
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxy / sxx;
};
const rssOf = (pid: number) => {
  const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
};
/** The V8 heap a component has in use (prom-client's nodejs_heap_size_used_bytes), or NaN if it did not answer. */
const heapOf = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  return Number(/^nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
};
/** The lowest value of each full window after `from` (minutes), at the window's middle: what stays after GC. */
const floors = (points: [number, number][], from: number, windowMinutes: number) => {
  const result: [number, number][] = [];
  for (let start = from; points.some(([minute]) => minute >= start + windowMinutes); start += windowMinutes) {
    const inside = points.filter(([minute, value]) => minute >= start && minute < start + windowMinutes && value >= 0);
    if (inside.length > 0) result.push([start + windowMinutes / 2, Math.min(...inside.map(([, value]) => value))]);
  }
  return result;
};
const bodyOf = (request: IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });

// What the webhooks tell: when each request was posted, and each one's POST → SUCCESS webhook by 5-minute window.
const posted = new Map<string, { at: number; window: number }>();
const latencies: number[][] = [];
const counts = { broadcastsAccepted: 0, broadcastsRefused: 0, finalized: 0, failed: 0, unknownWebhooks: 0 };
const signUps = { posted: 0, refused: 0, succeeded: 0, failed: 0, unknown: 0, again: 0, twice: 0 };
/** Each accepted sign-up's referenceId, and the webhook-ids of the notifications received for it. */
const signUpWebhooks = new Map<string, Set<string>>();
let watcherDeliveries = 0;
/** The headline figures, for docs/measurements/soak.json. */
const figures: BenchmarkFigure[] = [];
let soakStarted = 0;

const receiver = createServer((request, response) => {
  void bodyOf(request).then(
    (raw) => {
      response.writeHead(200).end();
      const path = request.url ?? '';
      if (path.startsWith('/watcher')) {
        watcherDeliveries++;
        return;
      }
      const body = JSON.parse(raw) as { referenceId?: string; status?: string };
      if (path.startsWith('/account')) {
        if (body.status === 'SUCCESS') signUps.succeeded++;
        else signUps.failed++;
        // A notification sent again carries the same webhook-id (a retry after a lost answer); one with a new id
        // for the same sign-up would be a second notification.
        const seen = body.referenceId === undefined ? undefined : signUpWebhooks.get(body.referenceId);
        const webhookId = String(request.headers['webhook-id'] ?? '');
        if (!seen) signUps.unknown++;
        else if (seen.has(webhookId)) signUps.again++;
        else if (seen.size > 0) signUps.twice++;
        seen?.add(webhookId);
        return;
      }
      const request_ = body.referenceId === undefined ? undefined : posted.get(body.referenceId);
      if (!request_) {
        counts.unknownWebhooks++;
        return;
      }
      posted.delete(body.referenceId as string);
      if (body.status !== 'SUCCESS') {
        counts.failed++;
        return;
      }
      counts.finalized++;
      (latencies[request_.window] ??= []).push(performance.now() - request_.at);
    },
    () => response.writeHead(400).end(),
  );
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

await cryptoWaitReady();
const retention = String(RETENTION_SECONDS);
// The broadcasts come from 50 users (MSA 2–51) who delegated their DSNP content to the provider.
const SENDERS = 50;
const gateway = await startLocalGateway({
  genesis: dsnpUsers(SENDERS),
  sealing: 'interval',
  blockTimeMs: BLOCK_MS,
  finalityLag: 1,
  env: {
    LOG_LEVEL: 'error',
    OUTBOUND_POLICY: 'allowlist',
    OUTBOUND_ALLOWED_DESTINATIONS: '127.0.0.1',
    REQUEST_STATUS_TTL_SECONDS: retention,
  },
  serviceEnv: {
    account: { SIWF_V2_URI_VALIDATION: LOGIN_URI, WEBHOOK_BASE_URL: `${receiverBase}/account` },
    'content-publishing': {
      WEBHOOK_BASE_URL: `${receiverBase}/content-publishing`,
      BATCH_INTERVAL_SECONDS: '2',
      BATCH_MAX_COUNT: '1000',
    },
  },
});
const components = Object.values(gateway.components);
const api = gateway.components['content-publishing-api']!.url;
const redis = new Redis(gateway.backing.redis.url, { lazyConnect: false });
const client = await GatewayClient.connect({
  account: gateway.components['account-api']!.url,
  contentPublishing: api,
  contentWatcher: gateway.components['content-watcher-api']!.url,
  ipfsGateway: gateway.backing.kubo!.gatewayUrl,
  chainUrl: gateway.backing.chain.url,
});

let sequence = 0;
/** One broadcast; resolves with its referenceId when accepted. */
async function broadcast(msaId: number): Promise<string | undefined> {
  const response = await fetch(`${api}/v1/content/${msaId}/broadcast`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ content: { content: `soak ${sequence++}`, published: '2026-11-26T04:00:00Z' } }),
  });
  const body = (await response.json().catch(() => ({}))) as { referenceId?: string };
  return response.status === 202 ? body.referenceId : undefined;
}

interface Sample {
  minute: number;
  rss: Record<string, number>;
  usedMemory: number;
  keys: number;
  keysWithTtl: number;
  outstanding: number;
}
const samples: Sample[] = [];
/** Every 5 s: each component's RSS and heap in use, by component name, as [minute, MiB]. */
const memory = {
  rss: new Map<string, [number, number][]>(),
  heap: new Map<string, [number, number][]>(),
};
async function sampleMemory(): Promise<void> {
  const minute = (performance.now() - soakStarted) / 60_000;
  await Promise.all(
    components.map(async (component) => {
      const add = (into: Map<string, [number, number][]>, bytes: number) => {
        if (!into.has(component.name)) into.set(component.name, []);
        if (Number.isFinite(bytes)) into.get(component.name)!.push([minute, bytes / MiB]);
      };
      add(memory.rss, rssOf(component.pid));
      add(memory.heap, await heapOf(component.url).catch(() => Number.NaN));
    }),
  );
}
async function sample(): Promise<void> {
  const memory = await redis.info('memory');
  const keyspace = await redis.info('keyspace');
  const db0 = /db0:keys=(\d+),expires=(\d+)/.exec(keyspace);
  samples.push({
    minute: (performance.now() - soakStarted) / 60_000,
    rss: Object.fromEntries(components.map((component) => [component.name, rssOf(component.pid)])),
    usedMemory: Number(/used_memory:(\d+)/.exec(memory)?.[1]),
    keys: Number(db0?.[1] ?? 0),
    keysWithTtl: Number(db0?.[2] ?? 0),
    outstanding: posted.size,
  });
  const last = samples.at(-1) as Sample;
  say(
    `  ${last.minute.toFixed(1).padStart(5)} min: used_memory ${(last.usedMemory / MiB).toFixed(1)} MiB, keys ${last.keys} (${last.keys - last.keysWithTtl} without TTL), awaiting webhook ${last.outstanding}, finalized ${counts.finalized}, watcher deliveries ${watcherDeliveries}, RSS ${components.map((component) => `${component.name} ${(last.rss[component.name]! / MiB).toFixed(0)}`).join(', ')}`,
  );
}

/** Groups Redis keys by shape (ids replaced by *), with how many and whether the first one has a TTL. */
async function keyShapes(): Promise<[string, number, number][]> {
  const shapes = new Map<string, { count: number; example: string }>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const shape = key
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
        .replace(/\b(?=[0-9a-zA-Z_-]*\d)[0-9a-zA-Z_-]{20,}\b/g, '<id>')
        .replace(/\d+/g, '<n>');
      const known = shapes.get(shape);
      if (known) known.count++;
      else shapes.set(shape, { count: 1, example: key });
    }
  } while (cursor !== '0');
  const rows = [...shapes.entries()].sort((a, b) => b[1].count - a[1].count).slice(0, 25);
  return Promise.all(
    rows.map(
      async ([shape, { count, example }]) => [shape, count, await redis.ttl(example)] as [string, number, number],
    ),
  );
}

try {
  const watcher = await fetch(`${gateway.components['content-watcher-api']!.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url: `${receiverBase}/watcher`, announcementTypes: ['broadcast'] }),
  });
  if (watcher.status !== 201) throw new Error(`watcher webhook registration: ${watcher.status}`);

  // Intake saturation in this run, on this stack: 64 connections posting as fast as the api answers.
  let saturated = 0;
  const saturationEnd = performance.now() + SATURATION_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: 64 }, async (_, lane) => {
      while (performance.now() < saturationEnd) if (await broadcast(2 + (lane % SENDERS))) saturated++;
    }),
  );
  const saturation = saturated / SATURATION_SECONDS;
  const rate = saturation / 2;
  line('intake saturation, this stack (64 connections)', `${saturation.toFixed(0)} accepted/s`);
  line('steady rate posted (half of it)', `${rate.toFixed(0)} broadcasts/s for ${MINUTES} min`);
  figures.push(
    { name: 'intake saturation, this stack (64 connections)', value: Math.round(saturation), unit: 'accepted/s' },
    { name: 'steady rate posted (half of it)', value: Math.round(rate), unit: 'broadcasts/s' },
  );
  line('block time, request retention (REQUEST_STATUS_TTL_SECONDS)', `${BLOCK_MS} ms, ${RETENTION_SECONDS} s`);
  line(
    'load average at the start (1, 5, 15 min)',
    readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', '),
  );

  soakStarted = performance.now();
  const soakEnd = soakStarted + MINUTES * 60_000;
  await sample();
  const sampler = setInterval(() => void sample(), SAMPLE_MS);
  const memorySampler = setInterval(() => void sampleMemory(), MEMORY_SAMPLE_MS);

  // Sign-ups at their own pace, one at a time.
  const signingUp = (async () => {
    for (let n = 0; performance.now() < soakEnd; n++) {
      const next = performance.now() + SIGNUP_EVERY_MS;
      try {
        const { referenceId } = await client.signUp(`soak${n}`);
        if (!signUpWebhooks.has(referenceId)) signUpWebhooks.set(referenceId, new Set());
        signUps.posted++;
      } catch {
        signUps.refused++;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
    }
  })();

  // Broadcasts at a steady rate: each tick sends what the schedule owes, never more than MAX_IN_FLIGHT at once.
  let sent = 0;
  let inFlight = 0;
  let behind = 0;
  while (performance.now() < soakEnd) {
    const due = Math.floor(((performance.now() - soakStarted) / 1000) * rate) - sent;
    for (let n = 0; n < due; n++) {
      if (inFlight >= MAX_IN_FLIGHT) {
        behind++;
        break;
      }
      const at = performance.now();
      const window = Math.floor((at - soakStarted) / WINDOW_MS);
      sent++;
      inFlight++;
      void broadcast(2 + (sent % SENDERS))
        .then(
          (referenceId) => {
            if (referenceId === undefined) counts.broadcastsRefused++;
            else {
              counts.broadcastsAccepted++;
              posted.set(referenceId, { at, window });
            }
          },
          () => counts.broadcastsRefused++,
        )
        .finally(() => inFlight--);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const postingEnded = performance.now();
  await signingUp;
  // Drain: every accepted request's webhook, for at most 20 blocks.
  while ((inFlight > 0 || posted.size > 0) && performance.now() - postingEnded < 20 * BLOCK_MS)
    await new Promise((resolve) => setTimeout(resolve, 100));
  clearInterval(sampler);
  clearInterval(memorySampler);
  await sample();

  say('');
  line('broadcasts accepted / refused', `${counts.broadcastsAccepted} / ${counts.broadcastsRefused}`);
  line(
    'achieved rate (accepted per second of soak)',
    `${(counts.broadcastsAccepted / (MINUTES * 60)).toFixed(0)} /s (ticks at the in-flight limit: ${behind})`,
  );
  line(
    'finalized (SUCCESS webhook) / failed / no webhook 20 blocks after',
    `${counts.finalized} / ${counts.failed} / ${posted.size}`,
  );
  line(
    'sign-ups accepted / refused; SUCCESS / other webhooks',
    `${signUps.posted} / ${signUps.refused}; ${signUps.succeeded} / ${signUps.failed}`,
  );
  line(
    'sign-up webhooks: sent again (same webhook-id) / second notice / unknown sign-up',
    `${signUps.again} / ${signUps.twice} / ${signUps.unknown}`,
  );
  line('content watcher deliveries', String(watcherDeliveries));
  figures.push(
    { name: 'broadcasts accepted', value: counts.broadcastsAccepted, unit: 'broadcasts' },
    { name: 'broadcasts refused', value: counts.broadcastsRefused, unit: 'broadcasts' },
    { name: 'finalized (SUCCESS webhook)', value: counts.finalized, unit: 'broadcasts' },
    { name: 'failed', value: counts.failed, unit: 'broadcasts' },
    { name: 'no webhook 20 blocks after', value: posted.size, unit: 'broadcasts' },
    { name: 'sign-ups accepted', value: signUps.posted, unit: 'sign-ups' },
    { name: 'sign-up SUCCESS webhooks', value: signUps.succeeded, unit: 'webhooks' },
    { name: 'sign-up second notices', value: signUps.twice, unit: 'webhooks', goal: '0' },
    { name: 'content watcher deliveries', value: watcherDeliveries, unit: 'deliveries' },
  );
  say('');
  say('p99 request → finalized (POST to SUCCESS webhook), by 5-minute window of the POST (goal ≤ 3 block times):');
  latencies.forEach((window, index) => {
    const p99 = percentile(window, 99);
    line(
      `  minutes ${index * 5}–${index * 5 + 5}`,
      `${(p99 / BLOCK_MS).toFixed(2)} block times (p99 ${(p99 / 1000).toFixed(1)} s, p50 ${(percentile(window, 50) / 1000).toFixed(1)} s, ${window.length} requests)`,
    );
    figures.push({
      name: `p99 request → finalized, minutes ${index * 5}–${index * 5 + 5}`,
      value: Number((p99 / BLOCK_MS).toFixed(2)),
      unit: 'block times',
      goal: '≤ 3',
    });
  });
  say('');
  say(
    `Memory slope after the ${WARM_UP_MINUTES}-minute warm-up, MiB per 10 min (goal < 1): through the floor of each ` +
      `${FLOOR_MINUTES}-minute window (RSS, V8 heap in use), and least squares through the minute samples of RSS:`,
  );
  const warm = samples.filter((s) => s.minute >= WARM_UP_MINUTES);
  for (const component of components) {
    const points = warm.map((s) => [s.minute, s.rss[component.name]! / MiB] as [number, number]);
    const rssFloors = floors(memory.rss.get(component.name) ?? [], WARM_UP_MINUTES, FLOOR_MINUTES);
    const heapFloors = floors(memory.heap.get(component.name) ?? [], WARM_UP_MINUTES, FLOOR_MINUTES);
    const mib = (floorsOf: [number, number][]) => floorsOf.map(([, value]) => value.toFixed(0)).join(' → ');
    line(
      `  ${component.name}`,
      `floors: RSS ${(slope(rssFloors) * 10).toFixed(2)}, heap ${(slope(heapFloors) * 10).toFixed(2)}; ` +
        `least squares ${(slope(points) * 10).toFixed(2)} (RSS floors ${mib(rssFloors)} MiB; heap floors ${mib(heapFloors)} MiB)`,
    );
    const perTenMinutes = (value: number) => Number((value * 10).toFixed(2));
    figures.push(
      {
        name: `${component.name}: RSS floors slope`,
        value: perTenMinutes(slope(rssFloors)),
        unit: 'MiB / 10 min',
        goal: '< 1',
      },
      {
        name: `${component.name}: heap floors slope`,
        value: perTenMinutes(slope(heapFloors)),
        unit: 'MiB / 10 min',
        goal: '< 1',
      },
    );
  }
  say('');
  const settled = samples.filter((s) => s.minute >= Math.max(WARM_UP_MINUTES, RETENTION_SECONDS / 60));
  line(
    `Redis after the retention window (${(RETENTION_SECONDS / 60).toFixed(0)} min): used_memory slope`,
    `${(slope(settled.map((s) => [s.minute, s.usedMemory / MiB])) * 10 || 0).toFixed(2)} MiB / 10 min`,
  );
  line('  keys slope', `${(slope(settled.map((s) => [s.minute, s.keys])) * 10 || 0).toFixed(0)} keys / 10 min`);
  figures.push(
    {
      name: 'Redis used_memory slope after the retention window',
      value: Number((slope(settled.map((s) => [s.minute, s.usedMemory / MiB])) * 10 || 0).toFixed(2)),
      unit: 'MiB / 10 min',
    },
    {
      name: 'Redis keys slope after the retention window',
      value: Math.round(slope(settled.map((s) => [s.minute, s.keys])) * 10 || 0),
      unit: 'keys / 10 min',
    },
  );
  say('Redis each minute (minute, used_memory MiB, keys, keys without TTL):');
  for (const s of samples)
    say(`  ${s.minute.toFixed(1)}\t${(s.usedMemory / MiB).toFixed(1)}\t${s.keys}\t${s.keys - s.keysWithTtl}`);
  say('Redis keys by shape at the end (count, TTL of one in seconds, -1 none):');
  for (const [shape, count, ttl] of await keyShapes())
    say(`  ${String(count).padStart(8)}  ${String(ttl).padStart(8)}  ${shape}`);
  line(
    'load average at the end (1, 5, 15 min)',
    readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(', '),
  );
  const measured = figures.filter((figure) => Number.isFinite(figure.value));
  const unmeasured = figures.filter((figure) => !Number.isFinite(figure.value)).map((figure) => figure.name);
  const written = writeBenchmarkResult({
    benchmark: 'soak',
    title: 'Soak: the whole gateway at half its intake saturation',
    figures: measured,
    notes: [
      `${MINUTES} minutes (BENCH_SOAK_MINUTES) of the six components as local processes, a devchain with ${BLOCK_MS} ` +
        `ms blocks, redis-server and Kubo; a SIWF sign-up every ${SIGNUP_EVERY_MS / 1000} s; request records kept ` +
        `${RETENTION_SECONDS} s. Memory slopes after a ${WARM_UP_MINUTES}-minute warm-up, through the floor of each ` +
        `${FLOOR_MINUTES}-minute window.`,
      ...(unmeasured.length > 0 ? [`Too short a run to measure: ${unmeasured.join(', ')}.`] : []),
    ],
  });
  say(`written to ${written}`);
} finally {
  await client.close();
  redis.disconnect();
  await gateway.stop();
  receiver.close();
}
process.exit(0);
