import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findTool } from './findExecutable.js';
import { ToolMissingError } from './redisServer.js';

export const KUBO_INSTALL_HINT =
  'Build it with `make tools` (builds github.com/ipfs/kubo into the tool cache), or put `ipfs` on PATH.';

/** `IPFS_BIN`, else the tool cache, else `ipfs` on PATH. */
export function findKubo(): string | undefined {
  return findTool('ipfs', 'IPFS_BIN');
}

export interface LocalKubo {
  /** The RPC API, e.g. http://127.0.0.1:41234 (what IPFS_ENDPOINT takes). */
  apiUrl: string;
  /** The HTTP gateway, e.g. http://127.0.0.1:41235 (serves /ipfs/{cid}). */
  gatewayUrl: string;
  /** The daemon's process id (a new one after `restart`). */
  pid(): number | undefined;
  /** Ends the daemon (SIGTERM), keeping its repository: an outage that `restart` ends. */
  halt(): Promise<void>;
  /** Starts the daemon again on the same repository and ports, after `halt`; resolves once it is ready. */
  restart(): Promise<void>;
  /** Ends the daemon and deletes its repository. */
  stop(): Promise<void>;
}

const LISTENING = /(RPC API|Gateway) server listening on \/ip4\/([\d.]+)\/tcp\/(\d+)/;

/** Resolves with the RPC API's and the gateway's URLs once the daemon says it is ready. */
function daemonReady(child: ChildProcess): Promise<{ api: string; gateway: string }> {
  return new Promise((resolve, reject) => {
    const found: Record<string, string> = {};
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        const match = LISTENING.exec(line);
        if (match) found[match[1] as string] = `http://${match[2]}:${match[3]}`;
      }
      if (found['RPC API'] && found.Gateway && output.includes('Daemon is ready')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve({ api: found['RPC API'], gateway: found.Gateway });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`ipfs daemon exited with ${code}: ${output.slice(-800)}`)));
    child.once('error', reject);
  });
}

/**
 * Runs a private, offline Kubo daemon with a fresh repository (test profile: no bootstrap peers, no
 * discovery, ports chosen by the system) and resolves once its RPC API and gateway listen.
 */
export async function startKubo(): Promise<LocalKubo> {
  const binary = findKubo();
  if (!binary) throw new ToolMissingError('ipfs (Kubo)', KUBO_INSTALL_HINT);
  const repo = mkdtempSync(join(tmpdir(), 'gateway-kubo-'));
  const env = { ...process.env, IPFS_PATH: repo };
  const daemon = (args: string[]) => spawn(binary, ['daemon', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let child: ChildProcess = daemon(['--init', '--init-profile=test', '--offline']);
  const urls = await daemonReady(child);
  const halt = async () => {
    const current = child;
    if (current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill('SIGTERM');
    await exited;
  };
  return {
    apiUrl: urls.api,
    gatewayUrl: urls.gateway,
    pid: () => child.pid,
    halt,
    restart: async () => {
      // The test profile lets the system choose the ports (tcp/0): pin the ones the clients know first.
      const multiaddress = (url: string) => `/ip4/127.0.0.1/tcp/${new URL(url).port}`;
      for (const [key, url] of [
        ['Addresses.API', urls.api],
        ['Addresses.Gateway', urls.gateway],
      ] as const)
        await new Promise<void>((resolve, reject) =>
          execFile(binary, ['config', key, multiaddress(url)], { env }, (error) => (error ? reject(error) : resolve())),
        );
      child = daemon(['--offline']);
      const again = await daemonReady(child);
      if (again.api !== urls.api || again.gateway !== urls.gateway)
        throw new Error(
          `ipfs daemon restarted on ${again.api} and ${again.gateway}, not ${urls.api} and ${urls.gateway}`,
        );
    },
    stop: async () => {
      await halt();
      rmSync(repo, { recursive: true, force: true });
    },
  };
}
