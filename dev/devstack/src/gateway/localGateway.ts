import { startGatewayBacking, type GatewayBacking, type GatewayBackingOptions } from './backing.js';
import {
  GATEWAY_COMPONENTS,
  startComponentProcess,
  untilReady,
  type ComponentProcess,
  type ComponentProcessOptions,
  type Role,
  type Service,
} from './components.js';

/** The gateway's components as local processes, on backing services of their own. */
export interface LocalGateway {
  backing: GatewayBacking;
  /** The first process of each component, by name (e.g. `account-api`); a restart replaces it here. */
  components: Record<string, ComponentProcess>;
  /** Every component process still to stop with the gateway, the ones `start` added included. */
  processes: ComponentProcess[];
  /**
   * Starts one more process of a component (a replica, an api with other settings) with its environment and
   * `env` over it; resolves once it is ready. It is stopped with the gateway.
   */
  start(service: Service, role: Role, env?: Record<string, string>): Promise<ComponentProcess>;
  /**
   * Starts a component again with the environment it had (after it was killed), on a new port; it replaces the
   * old one in `components`. Resolves once it answers /livez.
   */
  restart(name: string): Promise<ComponentProcess>;
  /** Stops the components (SIGTERM), then what they ran on; resolves with each first process's exit. */
  stop(): Promise<Record<string, { code: number | null; signal: NodeJS.Signals | null }>>;
}

export interface LocalGatewayOptions extends GatewayBackingOptions {
  /** Which components, in the order they start and are awaited: the six by default. */
  components?: readonly (readonly [Service, Role])[];
  /** More environment for every component (it wins over the backing's). */
  env?: Record<string, string>;
  /**
   * The whole environment of a service's components, in place of the backing's and `env` (an operator's env file
   * filled with the backing's addresses); `serviceEnv` and `roleEnv` still go over it.
   */
  environment?: (service: Service, backing: GatewayBacking) => Record<string, string>;
  /** More environment for the components of one service (it wins over `env`). */
  serviceEnv?: Partial<Record<Service, Record<string, string>>>;
  /** More environment for the apis or the workers (it wins over `serviceEnv`). */
  roleEnv?: Partial<Record<Role, Record<string, string>>>;
  /** How the processes of a role run (compiled, Node arguments, where their log lines go). */
  roleOptions?: Partial<Record<Role, ComponentProcessOptions>>;
}

/**
 * Starts the backing services and the components as processes (as `make dev` does, but with Kubo for IPFS and
 * nothing on fixed ports) and resolves once every component is ready. Whatever fails on the way, what was started
 * is stopped again.
 */
export async function startLocalGateway(options: LocalGatewayOptions = {}): Promise<LocalGateway> {
  const backing = await startGatewayBacking(options);
  const envOf = (service: Service, role: Role) => ({
    ...(options.environment ? options.environment(service, backing) : { ...backing.env, ...options.env }),
    ...options.serviceEnv?.[service],
    ...options.roleEnv?.[role],
  });
  const components: Record<string, ComponentProcess> = {};
  const processes: ComponentProcess[] = [];
  const launch = async (service: Service, role: Role, env: Record<string, string>) => {
    const started = await startComponentProcess(service, role, env, options.roleOptions?.[role]);
    processes.push(started);
    return started;
  };
  const stopAll = async (signal?: NodeJS.Signals) => {
    const exits = await Promise.all(processes.map((one) => one.stop(signal)));
    await backing.stop();
    return exits;
  };
  try {
    // Every launch ends before a failure is told, so that none still starting outlives the stop below.
    const launches = await Promise.allSettled(
      (options.components ?? GATEWAY_COMPONENTS).map(([service, role]) => launch(service, role, envOf(service, role))),
    );
    const failed = launches.find((launched) => launched.status === 'rejected');
    if (failed) throw failed.reason;
    const first = launches.map((launched) => (launched as PromiseFulfilledResult<ComponentProcess>).value);
    for (const component of first) components[component.name] = component;
    for (const component of first) await untilReady(component);
  } catch (error) {
    await stopAll('SIGKILL');
    throw error;
  }
  return {
    backing,
    components,
    processes,
    start: async (service, role, env = {}) => {
      const started = await launch(service, role, { ...envOf(service, role), ...env });
      await untilReady(started);
      return started;
    },
    restart: async (name) => {
      const [service, role] =
        (options.components ?? GATEWAY_COMPONENTS).find(([service, role]) => `${service}-${role}` === name) ?? [];
      if (!service || !role) throw new Error(`no component ${name}`);
      const started = await launch(service, role, envOf(service, role));
      components[name] = started;
      return started;
    },
    stop: async () => {
      const names = Object.keys(components);
      await stopAll();
      return Object.fromEntries(await Promise.all(names.map(async (name) => [name, await components[name]!.exited])));
    },
  };
}
