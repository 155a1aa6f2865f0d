import { spawn, type ChildProcess } from 'node:child_process';
import { KUBECTL } from '../commands.js';

/**
 * `kubectl port-forward` to a Service of a namespace on 127.0.0.1 (a port the system picks): the way the suites reach
 * something that is one pod and has no NodePort (the devchain). The forward follows the pod it chose when it started;
 * it ends with that pod.
 */
export class PortForward {
  private constructor(
    private readonly child: ChildProcess,
    /** http://127.0.0.1:<local port> */
    readonly url: string,
  ) {}

  static start(namespace: string, service: string, port: number, timeoutMs = 30_000): Promise<PortForward> {
    const child = spawn(
      KUBECTL,
      ['-n', namespace, 'port-forward', '--address', '127.0.0.1', `service/${service}`, `:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    return new Promise((resolve, reject) => {
      let printed = '';
      const timer = setTimeout(() => {
        child.kill('SIGTERM');
        reject(
          new Error(`kubectl port-forward service/${service}: no forwarding port within ${timeoutMs} ms: ${printed}`),
        );
      }, timeoutMs);
      const read = (chunk: Buffer) => {
        printed += chunk.toString();
        const local = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(printed)?.[1];
        if (local) {
          clearTimeout(timer);
          resolve(new PortForward(child, `http://127.0.0.1:${local}`));
        }
      };
      child.stdout.on('data', read);
      child.stderr.on('data', read);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`kubectl port-forward service/${service} ended (${code}): ${printed}`));
      });
    });
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}
