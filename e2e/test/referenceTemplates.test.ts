// The switch from the reference gateway (docs/migrating-from-the-reference.md): the six components started from the
// reference's three env templates, filled for a local stack (the addresses of its chain, Redis, Kubo and webhook
// receiver; the templates' paths and query kept, `/api/v0` and `?commandTimeout=10000` among them) with the settings
// this gateway refuses removed, as the guide says. Nothing else is set but the outbound policy, which lets the
// components reach the receiver on 127.0.0.1 (the default refuses loopback). A user signs up with SIWF and
// broadcasts; the outcomes come to the templates' webhook bases, the account's carrying PROVIDER_ACCESS_TOKEN as
// its bearer token; the content watcher delivers the broadcast; the template's rate limit holds.
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  callJson,
  filledReferenceTemplate,
  startWebhookReceiver,
  waitUntil,
  REFERENCE_TEMPLATES,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { startLocalGateway, type LocalGateway } from '@frequency-gateway/devstack/gateway';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { GatewayClient, LOGIN_URI } from '../src/clients/gatewayClient.js';
import { ReceivedWebhooks, type Delivery } from '../src/clients/receiver.js';

const GATEWAY = fileURLToPath(new URL('../../bin/gateway.js', import.meta.url));
const WATCHER_PATH = '/watcher/broadcasts';

let receiver: WebhookReceiver;
let received: ReceivedWebhooks;
let local: LocalGateway | undefined;
let client: GatewayClient | undefined;
/** Each service's environment, as started, and the settings its components refused at their first start. */
const environments: Record<string, Record<string, string>> = {};
const refusals: Record<string, string[]> = {};

const say = (line: string) => process.stdout.write(`e2e reference templates: ${line}\n`);

/** The one delivery at `path` whose body matches `which`. */
async function deliveryAt(path: string, which: (body: Record<string, unknown>) => boolean): Promise<Delivery> {
  const found = await waitUntil(
    async () => {
      const matching = (await received.at(path)).filter((delivery) => which(delivery.body));
      return matching.length > 0 && matching;
    },
    120_000,
    `a webhook at ${path}`,
  );
  expect(found).toHaveLength(1);
  return found[0]!;
}

/**
 * What `gateway <service> <role>` refuses to start on (`env` and nothing else but PATH): the names its start lists,
 * one line each. It must exit 1.
 */
async function refusedAtStart(service: string, role: string, env: Record<string, string>): Promise<string[]> {
  const outcome = await new Promise<{ code: number | null; stderr: string }>((resolve) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', '--conditions=source', GATEWAY, service, role],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 },
      (error, _stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr }),
    ),
  );
  expect(`${service}-${role} exit ${outcome.code}`).toBe(`${service}-${role} exit 1`);
  return [...outcome.stderr.matchAll(/^\s+- ([A-Z0-9_]+) /gm)].map((match) => match[1]!);
}

beforeAll(async () => {
  await cryptoWaitReady();
  // As the guide says: each service's components are started once on its template, and what they refuse (each
  // start names every setting it does not support) is removed.
  for (const [service, template] of Object.entries(REFERENCE_TEMPLATES)) {
    const named = await Promise.all(['api', 'worker'].map((role) => refusedAtStart(service, role, template)));
    refusals[service] = [...new Set(named.flat())].sort();
  }
  receiver = await startWebhookReceiver();
  received = new ReceivedWebhooks(receiver.url, receiver.url);
  local = await startLocalGateway({
    // Each template as an operator fills it for this stack, less what its components refused.
    environment: (service, backing) => {
      const filled = filledReferenceTemplate(service, {
        chainUrl: backing.chain.url,
        redisUrl: backing.env.REDIS_URL!,
        ipfsApiUrl: backing.kubo!.apiUrl,
        ipfsGatewayUrl: backing.kubo!.gatewayUrl,
        webhookBaseUrl: received.destination(`/${service}`),
        loginUri: LOGIN_URI,
      });
      const kept = Object.fromEntries(Object.entries(filled).filter(([name]) => !refusals[service]!.includes(name)));
      environments[service] = kept;
      return { ...kept, OUTBOUND_POLICY: 'allowlist', OUTBOUND_ALLOWED_DESTINATIONS: '127.0.0.1' };
    },
  });
  client = await GatewayClient.connect({
    account: local.components['account-api']!.url,
    contentPublishing: local.components['content-publishing-api']!.url,
    contentWatcher: local.components['content-watcher-api']!.url,
    ipfsGateway: local.backing.kubo!.gatewayUrl,
    chainUrl: local.backing.chain.url,
  });
}, 600_000);

afterAll(async () => {
  await client?.close();
  await local?.stop();
  await receiver?.stop();
}, 120_000);

test('the components refuse the settings the guide lists, and start on the rest of the templates', () => {
  const listed = ['API_TIMEOUT_MS', 'BLOCKCHAIN_SCAN_INTERVAL_SECONDS', 'FREQUENCY_TIMEOUT_SECS', 'SIWF_URL'];
  for (const [service, template] of Object.entries(REFERENCE_TEMPLATES)) {
    const refused = refusals[service]!;
    expect(refused).toEqual(expect.arrayContaining(listed.filter((name) => name in template)));
    for (const name of refused)
      expect(`${name}: ${name in template && (listed.includes(name) || /^(HEALTH_CHECK_|ASSET_)/.test(name))}`).toBe(
        `${name}: true`,
      );
    say(
      `${service}: ${Object.keys(environments[service]!).length} settings kept; refused at first start: ${refused.join(' ')}`,
    );
  }
  expect(environments['content-publishing']!.IPFS_ENDPOINT).toMatch(/\/api\/v0$/);
  expect(environments.account!.REDIS_URL).toMatch(/\?commandTimeout=10000$/);
});

test('a user signs up and broadcasts; the outcomes reach the webhook bases, the account with its bearer token, and the watcher delivers the broadcast', async () => {
  const started = Date.now();
  const registered = await callJson(client!.contentWatcher, 'POST', '/v1/webhooks', {
    url: received.destination(WATCHER_PATH),
    announcementTypes: ['broadcast'],
  });
  expect(registered.status).toBe(201);

  const { referenceId } = await client!.signUp(`ref${randomBytes(3).toString('hex')}`);
  const signedUp = await deliveryAt('/account/webhooks/transaction-notify', (body) => body.referenceId === referenceId);
  expect(signedUp.headers.authorization).toBe(`Bearer ${REFERENCE_TEMPLATES.account.PROVIDER_ACCESS_TOKEN}`);
  const msaId = String(signedUp.body.msaId);
  expect(msaId).toMatch(/^\d+$/);

  const content = `from the reference's templates ${randomBytes(4).toString('hex')}`;
  const accepted = await client!.broadcast(msaId, { content, published: new Date().toISOString() });
  expect(accepted.status).toBe(202);
  const outcome = await deliveryAt(
    '/content-publishing/webhooks/transaction-notify',
    (body) => body.referenceId === accepted.body.referenceId,
  );
  expect(outcome.body).toMatchObject({ referenceId: accepted.body.referenceId });
  const watched = await waitUntil(
    async () => {
      for (const delivery of await received.at(WATCHER_PATH)) {
        const url = (delivery.body.announcement as { url?: string } | undefined)?.url;
        if (url && (await client!.noteAt(url)).content === content) return delivery;
      }
      return false;
    },
    120_000,
    'the content watcher delivering the broadcast',
  );
  expect(String((watched.body.announcement as { fromId?: unknown }).fromId)).toBe(msaId);
  say(
    `signed up as MSA ${msaId}, broadcast finalized and delivered in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
});

/** GET `url` from 127.0.0.2, a client address no request of the run came from: its answer's status. */
function statusFromOtherClient(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { localAddress: '127.0.0.2' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    }).on('error', reject);
  });
}

test("the template's rate limit (RATE_LIMIT_MAX_REQUESTS 100 per RATE_LIMIT_TTL 60,000 ms) holds per client", async () => {
  const statuses: number[] = [];
  for (let n = 0; n < 110; n++) statuses.push(await statusFromOtherClient(`${client!.contentWatcher}/v1/webhooks`));
  expect(statuses.slice(0, 100).every((status) => status === 200)).toBe(true);
  expect(statuses.slice(100).every((status) => status === 429)).toBe(true);
});
