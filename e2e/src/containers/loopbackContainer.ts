import { GenericContainer } from 'testcontainers';

/**
 * A GenericContainer whose exposed ports are published on 127.0.0.1 only (testcontainers publishes on every
 * address): the test process reaches them on loopback, nothing else on the network can.
 */
export class LoopbackContainer extends GenericContainer {
  override withExposedPorts(...ports: Parameters<GenericContainer['withExposedPorts']>): this {
    super.withExposedPorts(...ports);
    for (const bindings of Object.values(this.hostConfig.PortBindings ?? {}) as { HostIp?: string }[][])
      for (const binding of bindings) binding.HostIp = '127.0.0.1';
    return this;
  }
}
