import { componentPort, containerLogTail, type ContainerGateway } from '../containers/containerGateway.js';
import { docker, publishedPort } from '../containers/docker.js';
import { GATEWAY_COMPONENTS, type LocalGateway } from '@frequency-gateway/devstack/gateway';
import type { GatewayEndpoints } from '../clients/gatewayClient.js';

/**
 * The faults the e2e fault suite makes, the same on either stack: through the container runtime on containers, with
 * signals to the processes on local processes. Each pair (stop, start) is an outage the suite times itself.
 */
export interface Disruptions {
  /** How the faults are made, for the printed lines. */
  how: string;
  /** Kills a component at once (`docker kill`, SIGKILL) and starts it again; resolves once it runs. */
  killAndStart(component: string): Promise<void>;
  /** Restarts Redis (`docker restart`; SIGTERM and a start on the same port): its append-only file is kept. */
  restartRedis(): Promise<void>;
  /** Freezes the chain (`docker pause`, SIGSTOP): connections stay open, nothing answers. */
  pauseChain(): Promise<void>;
  resumeChain(): Promise<void>;
  /** Stops IPFS (`docker stop`, SIGTERM to Kubo), keeping its repository. */
  stopIpfs(): Promise<void>;
  /** Starts it again; `endpoints.ipfsGateway` then names where the test reaches its gateway. */
  startIpfs(): Promise<void>;
  /** Stops the webhook receiver: the components' webhooks find nobody there. */
  stopReceiver(): Promise<void>;
  /** Starts it again where the components reach it, with every request it acknowledged before; resolves once it answers. */
  startReceiver(): Promise<void>;
  /** Where the test reaches a component (`account-api`, …) now: a restart may publish it on another port. */
  componentUrl(component: string): string;
  /** The last `lines` lines a component printed (its log), for a failure's message. */
  logTail(component: string, lines?: number): Promise<string>;
}

/** The receiver's controls, as the gateway under test made it. */
export interface ReceiverControls {
  stop(): Promise<void>;
  start(): Promise<void>;
}

export function containerDisruptions(
  gateway: ContainerGateway,
  endpoints: GatewayEndpoints,
  receiver: ReceiverControls,
): Disruptions {
  const name = (role: string) => gateway.containers[role]!.name;
  return {
    how: 'the container runtime',
    killAndStart: async (component) => {
      const definition = GATEWAY_COMPONENTS.find(([service, role]) => `${service}-${role}` === component);
      if (!definition) throw new Error(`no component ${component}`);
      await docker(['kill', name(component)]);
      await docker(['start', name(component)]);
      const port = await publishedPort(name(component), `${componentPort(...definition)}/tcp`);
      gateway.urls.components[component] = `http://127.0.0.1:${port}`;
    },
    restartRedis: async () => {
      await docker(['restart', '--time', '1', name('redis')]);
    },
    pauseChain: async () => {
      await docker(['pause', name('chain')]);
    },
    resumeChain: async () => {
      await docker(['unpause', name('chain')]);
    },
    stopIpfs: async () => {
      await docker(['stop', name('kubo')]);
    },
    startIpfs: async () => {
      await docker(['start', name('kubo')]);
      endpoints.ipfsGateway = `http://127.0.0.1:${await publishedPort(name('kubo'), '8080/tcp')}`;
    },
    stopReceiver: receiver.stop,
    startReceiver: receiver.start,
    componentUrl: (component) => gateway.urls.components[component]!,
    logTail: (component, lines = 40) => containerLogTail(name(component), lines),
  };
}

/** SIGSTOP or SIGCONT to a process. */
const signal = async (pid: number, which: 'SIGSTOP' | 'SIGCONT'): Promise<void> => {
  process.kill(pid, which);
};

export function localDisruptions(gateway: LocalGateway, receiver: ReceiverControls): Disruptions {
  return {
    how: 'signals to local processes',
    killAndStart: async (component) => {
      await gateway.components[component]!.stop('SIGKILL');
      await gateway.restart(component);
    },
    restartRedis: async () => {
      await gateway.backing.redis.kill('SIGTERM');
      await gateway.backing.redis.restart();
    },
    pauseChain: () => signal(gateway.backing.chain.pid, 'SIGSTOP'),
    resumeChain: () => signal(gateway.backing.chain.pid, 'SIGCONT'),
    stopIpfs: () => gateway.backing.kubo!.halt(),
    startIpfs: () => gateway.backing.kubo!.restart(),
    stopReceiver: receiver.stop,
    startReceiver: receiver.start,
    componentUrl: (component) => gateway.components[component]!.url,
    logTail: async (component, lines = 40) => gateway.components[component]!.output().slice(-lines).join('\n'),
  };
}
