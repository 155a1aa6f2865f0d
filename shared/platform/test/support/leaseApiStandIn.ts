import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

type Lease = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
};

/**
 * A stand-in for the part of the Kubernetes API server that leader election uses: Leases in
 * coordination.k8s.io/v1 with get, create (409 AlreadyExists) and replace guarded by resourceVersion
 * (409 Conflict on a stale one), as the real API server behaves.
 */
export class LeaseApiStandIn {
  readonly leases = new Map<string, Lease>();
  private version = 1;
  private server?: Server;
  requests = 0;

  async start(): Promise<KubeConfig> {
    this.server = createServer(
      (req, res) =>
        void this.handle(req).then(([status, body]) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        }),
    );
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'stand-in', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'token' }],
      contexts: [{ name: 'stand-in', cluster: 'stand-in', user: 'tester' }],
      currentContext: 'stand-in',
    });
    return kubeConfig;
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server?.close(resolve));
  }

  private status(code: number, reason: string, message: string) {
    return [code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }] as [number, unknown];
  }

  private async handle(req: IncomingMessage): Promise<[number, unknown]> {
    this.requests++;
    const match = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/?]+))?/.exec(req.url ?? '');
    if (!match) return this.status(404, 'NotFound', 'no such path');
    const [, namespace, name] = match;
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const body = text ? (JSON.parse(text) as Lease) : undefined;
    const key = `${namespace}/${name ?? body?.metadata.name}`;
    const current = this.leases.get(key);
    if (req.method === 'GET')
      return current ? [200, current] : this.status(404, 'NotFound', `leases "${name}" not found`);
    if (req.method === 'POST' && body) {
      if (current) return this.status(409, 'AlreadyExists', `leases "${body.metadata.name}" already exists`);
      const created = {
        ...body,
        metadata: { ...body.metadata, namespace: namespace!, resourceVersion: String(this.version++) },
      };
      this.leases.set(key, created);
      return [201, created];
    }
    if (req.method === 'PUT' && body) {
      if (!current) return this.status(404, 'NotFound', `leases "${name}" not found`);
      if (body.metadata.resourceVersion !== current.metadata.resourceVersion) {
        return this.status(
          409,
          'Conflict',
          'the object has been modified; please apply your changes to the latest version and try again',
        );
      }
      const replaced = { ...body, metadata: { ...body.metadata, resourceVersion: String(this.version++) } };
      this.leases.set(key, replaced);
      return [200, replaced];
    }
    return this.status(405, 'MethodNotAllowed', 'method not allowed');
  }
}
