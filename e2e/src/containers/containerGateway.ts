import { randomBytes } from 'node:crypto';
import { webhookReceiverProgram } from '@frequency-gateway/devstack';
import { GATEWAY_COMPONENTS, type Role, type Service } from '@frequency-gateway/devstack/gateway';
import { Network, Wait, type StartedNetwork, type StartedTestContainer } from 'testcontainers';
import { provisionProvider } from '../provider.js';
import { chainContainer, kuboContainer, redisContainer } from './backingContainers.js';
import { tryDocker } from './docker.js';
import type { StackImages } from './images.js';
import { LoopbackContainer } from './loopbackContainer.js';

/** Each api's port (its worker serves health and metrics on the api port + 10), as the image exposes them. */
const API_PORTS: Record<Service, number> = { account: 3013, 'content-publishing': 3010, 'content-watcher': 3011 };
export const componentPort = (service: Service, role: Role) => API_PORTS[service] + (role === 'worker' ? 10 : 0);

/** Network aliases: how the containers of a run reach each other. */
export const ALIASES = {
  chain: 'chain',
  redis: 'redis',
  kubo: 'kubo',
  receiver: 'webhook-receiver',
} as const;

/** One container of the run: its name for the container runtime (`docker kill NAME`) and its handle. */
export interface RunContainer {
  name: string;
  container: StartedTestContainer;
}

/** The whole gateway in containers on one Docker network of its own. */
export interface ContainerGateway {
  /** Prefix of every container name of the run, e.g. `fg-e2e-1a2b3c`. */
  run: string;
  network: StartedNetwork;
  /** By role: chain, redis, kubo, receiver, and each component (`account-api`, …). */
  containers: Record<string, RunContainer>;
  /** From the test process, on 127.0.0.1. */
  urls: {
    chain: string;
    ipfsGateway: string;
    receiver: string;
    components: Record<string, string>;
  };
  /** The receiver as the components reach it. */
  receiverBase: string;
  stop(): Promise<void>;
}

export interface ContainerGatewayOptions {
  images: StackImages;
  /** Environment for every component (wins over the defaults), and per service. */
  env?: Record<string, string>;
  serviceEnv?: Partial<Record<Service, Record<string, string>>>;
}

/** The last lines a container printed, for a failure's message. */
export async function containerLogTail(name: string, lines = 30): Promise<string> {
  const result = await tryDocker(['logs', '--tail', String(lines), name]);
  return `${result.stdout}${result.stderr}`.trim();
}

/**
 * Starts the chain, Redis, Kubo and the webhook receiver, then the six components (containers of the gateway
 * image), all on one new Docker network where they find each other by alias; only the apis, the chain, the IPFS
 * gateway and the receiver are published, on 127.0.0.1. Resolves once every component answers /readyz. Whatever
 * fails on the way, what was started is removed again.
 */
export async function startContainerGateway(options: ContainerGatewayOptions): Promise<ContainerGateway> {
  const { images } = options;
  const run = `fg-e2e-${randomBytes(3).toString('hex')}`;
  const labels = { 'org.frequency-gateway.e2e-run': run };
  const containers: Record<string, RunContainer> = {};
  let network: StartedNetwork | undefined;
  const stop = async () => {
    await Promise.allSettled(Object.values(containers).map(({ container }) => container.stop({ timeout: 5_000 })));
    await network?.stop();
  };
  const start = async (role: string, builder: LoopbackContainer) => {
    const name = `${run}-${role}`;
    try {
      containers[role] = {
        name,
        container: await builder.withName(name).withLabels(labels).withNetwork(network!).start(),
      };
    } catch (error) {
      const logs = await containerLogTail(name);
      await tryDocker(['rm', '-f', name]);
      throw new Error(`${name} (${role}) did not start: ${String(error)}${logs ? `\n${logs}` : ''}`, { cause: error });
    }
    return containers[role]!.container;
  };
  try {
    // Named after the run, like its containers.
    network = await new Network({ nextUuid: () => run }).start();
    const receiverProgram = await webhookReceiverProgram();
    const [chain, , kubo, receiver] = await Promise.all([
      start('chain', chainContainer(images).withNetworkAliases(ALIASES.chain)),
      start('redis', redisContainer(images).withNetworkAliases(ALIASES.redis)),
      start('kubo', kuboContainer(images).withNetworkAliases(ALIASES.kubo).withExposedPorts(8080)),
      start(
        'receiver',
        new LoopbackContainer(images.gateway)
          .withNetworkAliases(ALIASES.receiver)
          .withCopyContentToContainer([{ content: receiverProgram, target: '/tmp/receiver.mjs', mode: 0o644 }])
          .withEntrypoint(['node'])
          .withCommand(['/tmp/receiver.mjs'])
          // Kept in the container's own file system, which `docker stop` and `docker start` keep.
          .withEnvironment({ PORT: '8080', RECEIVED_FILE: '/tmp/received.jsonl' })
          .withExposedPorts(8080)
          .withWaitStrategy(Wait.forHttp('/healthz', 8080)),
      ),
    ]);
    const loopback = (container: StartedTestContainer, port: number) => `127.0.0.1:${container.getMappedPort(port)}`;
    const chainUrl = `ws://${loopback(chain, 9944)}`;
    // //Alice's MSA a staked provider: the devchain's genesis has it, a fresh node needs it done.
    await provisionProvider(chainUrl);

    const receiverBase = `http://${ALIASES.receiver}:8080`;
    const common = {
      REDIS_URL: `redis://${ALIASES.redis}:6379`,
      FREQUENCY_API_WS_URL: `ws://${ALIASES.chain}:9944`,
      IPFS_ENDPOINT: `http://${ALIASES.kubo}:5001`,
      IPFS_GATEWAY_URL: `http://${ALIASES.kubo}:8080/ipfs/[CID]`,
      PROVIDER_ID: '1',
      PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
      LOG_LEVEL: 'warn',
      LOG_PRETTY: 'false',
      // Webhooks may go to the run's receiver and nowhere else.
      OUTBOUND_POLICY: 'allowlist',
      OUTBOUND_ALLOWED_DESTINATIONS: ALIASES.receiver,
      ...options.env,
    };
    const components = await Promise.all(
      GATEWAY_COMPONENTS.map(([service, role]) => {
        const port = componentPort(service, role);
        return start(
          `${service}-${role}`,
          new LoopbackContainer(images.gateway)
            .withCommand([service, role])
            .withEnvironment({ ...common, ...options.serviceEnv?.[service] })
            .withExposedPorts(port)
            .withWaitStrategy(Wait.forHttp('/readyz', port).forStatusCode(200))
            .withStartupTimeout(180_000),
        ).then((container) => [`${service}-${role}`, `http://${loopback(container, port)}`] as const);
      }),
    );
    return {
      run,
      network,
      containers,
      urls: {
        chain: chainUrl,
        ipfsGateway: `http://${loopback(kubo, 8080)}`,
        receiver: `http://${loopback(receiver, 8080)}`,
        components: Object.fromEntries(components),
      },
      receiverBase,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
