import { randomBytes } from 'node:crypto';
import { startWebhookReceiver } from '@frequency-gateway/devstack';
import { startLocalGateway, type LocalGateway, type Service } from '@frequency-gateway/devstack/gateway';
import { startContainerGateway, type ContainerGateway } from '../containers/containerGateway.js';
import { docker, missingContainerPrerequisites, publishedPort, useProjectDocker } from '../containers/docker.js';
import { imageSource, prepareImages } from '../containers/images.js';
import { GatewayClient, LOGIN_URI, type GatewayEndpoints } from '../clients/gatewayClient.js';
import { containerDisruptions, localDisruptions, type Disruptions } from './disruptions.js';
import { ReceivedWebhooks } from '../clients/receiver.js';

/** Where the account and content-publishing services notify outcomes, under the receiver. */
export const ACCOUNT_WEBHOOKS = '/account/webhooks/transaction-notify';
export const CONTENT_WEBHOOKS = '/content-publishing/webhooks/transaction-notify';

/** The whole gateway a journey runs against, wherever it runs, with a webhook receiver it may notify. */
export interface GatewayUnderTest {
  mode: 'containers' | 'local';
  endpoints: GatewayEndpoints;
  receiver: ReceivedWebhooks;
  /** The key every webhook of this gateway is signed with. */
  webhookSecret: string;
  /** Set in containers mode: the run's containers, for faults through the container runtime. */
  containers?: ContainerGateway;
  /** Set in local mode: the component processes. */
  local?: LocalGateway;
  /** The faults the fault suite makes: through the container runtime, or signals to the local processes. */
  disruptions: Disruptions;
  describe(): string;
  client(): Promise<GatewayClient>;
  stop(): Promise<void>;
}

export interface GatewayUnderTestOptions {
  /** More environment for every component. */
  env?: Record<string, string>;
  /** Wins over E2E_STACK (the faults suite needs the container runtime). */
  mode?: 'containers' | 'local';
}

/**
 * `E2E_STACK=containers|local` (default containers). Containers need root and Debian's docker.io (and, for the
 * local images, redis-server, Kubo and busybox): when one is missing the suite fails naming it under CI, and runs on
 * local processes otherwise, saying why.
 */
function chooseMode(forced?: 'containers' | 'local'): { mode: 'containers' | 'local'; why: string } {
  const asked = forced ?? process.env.E2E_STACK;
  if (asked !== undefined && asked !== 'containers' && asked !== 'local')
    throw new Error(`E2E_STACK must be containers or local, not ${JSON.stringify(asked)}`);
  const source = forced ? 'the suite' : `E2E_STACK=${asked}`;
  if (asked === 'local') return { mode: 'local', why: source };
  const missing = missingContainerPrerequisites(imageSource() === 'local');
  if (missing.length === 0) return { mode: 'containers', why: asked ? source : 'default' };
  const message = `the e2e suites in containers cannot run here. Missing:\n${missing.map((entry) => `  - ${entry}`).join('\n')}`;
  if (asked === 'containers' || process.env.CI === 'true')
    throw new Error(
      `${message}\n(E2E_STACK=local runs them on local processes instead; CI=${process.env.CI ?? 'unset'})`,
    );
  return { mode: 'local', why: `containers need: ${missing.join('; ')}` };
}

/**
 * Starts the six components with their chain, Redis, IPFS and a webhook receiver: containers of the images made
 * here (or the published ones, E2E_IMAGES=published) on one Docker network, or local processes. The components
 * notify outcomes to the receiver (`/account/...`, `/content-publishing/...`), sign webhooks with a fresh secret,
 * accept the journeys' SIWF login URI, and may send webhooks to the receiver only. Prints what runs.
 */
export async function startGatewayUnderTest(options: GatewayUnderTestOptions = {}): Promise<GatewayUnderTest> {
  const { mode, why } = chooseMode(options.mode);
  const webhookSecret = randomBytes(24).toString('hex');
  const serviceEnv = (receiverBase: string): Partial<Record<Service, Record<string, string>>> => ({
    account: { SIWF_V2_URI_VALIDATION: LOGIN_URI, WEBHOOK_BASE_URL: `${receiverBase}/account` },
    'content-publishing': { WEBHOOK_BASE_URL: `${receiverBase}/content-publishing`, BATCH_INTERVAL_SECONDS: '2' },
  });
  const env = { WEBHOOK_SECRET: webhookSecret, ...options.env };
  let gateway: Omit<GatewayUnderTest, 'client'>;
  if (mode === 'containers') {
    await useProjectDocker();
    const images = await prepareImages(imageSource());
    const started = await startContainerGateway({
      images,
      env,
      serviceEnv: serviceEnv(`http://webhook-receiver:8080`),
    });
    const receiver = new ReceivedWebhooks(started.urls.receiver, started.receiverBase);
    const receiverContainer = started.containers.receiver!.name;
    const endpoints = {
      account: started.urls.components['account-api']!,
      contentPublishing: started.urls.components['content-publishing-api']!,
      contentWatcher: started.urls.components['content-watcher-api']!,
      ipfsGateway: started.urls.ipfsGateway,
      chainUrl: started.urls.chain,
    };
    gateway = {
      mode,
      webhookSecret,
      containers: started,
      receiver,
      disruptions: containerDisruptions(started, endpoints, {
        stop: async () => {
          await docker(['stop', '--time', '5', receiverContainer]);
        },
        // `docker start` publishes its port anew.
        start: async () => {
          await docker(['start', receiverContainer]);
          receiver.movedTo(`http://127.0.0.1:${await publishedPort(receiverContainer, '8080/tcp')}`);
          await receiver.answering();
        },
      }),
      endpoints,
      describe: () =>
        `containers (${why}; ${images.source} images: ${images.gateway}, chain ${images.chain.image}, ${images.redis}, ${images.kubo}; network ${started.network.getName()})`,
      stop: started.stop,
    };
  } else {
    // In this process: stopped and started again, it still has every request it acknowledged.
    const receiver = await startWebhookReceiver();
    const received = new ReceivedWebhooks(receiver.url, receiver.url);
    let local: LocalGateway;
    try {
      local = await startLocalGateway({
        env: { ...env, OUTBOUND_POLICY: 'allowlist', OUTBOUND_ALLOWED_DESTINATIONS: '127.0.0.1' },
        // As the run's Redis container keeps it: a restart loses nothing.
        redisServer: { appendOnly: 'everysec' },
        serviceEnv: serviceEnv(received.destination('')),
      });
    } catch (error) {
      await receiver.stop();
      throw error;
    }
    gateway = {
      mode,
      webhookSecret,
      local,
      receiver: received,
      disruptions: localDisruptions(local, receiver),
      endpoints: {
        account: local.components['account-api']!.url,
        contentPublishing: local.components['content-publishing-api']!.url,
        contentWatcher: local.components['content-watcher-api']!.url,
        ipfsGateway: local.backing.kubo!.gatewayUrl,
        chainUrl: local.backing.chain.url,
      },
      describe: () => `local processes (${why}; devchain, redis-server, Kubo; the receiver in this process)`,
      stop: async () => {
        await local.stop();
        await receiver.stop();
      },
    };
  }
  process.stdout.write(`e2e gateway: ${gateway.describe()}\n`);
  return { ...gateway, client: () => GatewayClient.connect(gateway.endpoints) };
}
