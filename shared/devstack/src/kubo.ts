import { spawn, type ChildProcess } from 'node:child_process';
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
  pid: number;
  stop(): Promise<void>;
}

const LISTENING = /(RPC API|Gateway) server listening on \/ip4\/([\d.]+)\/tcp\/(\d+)/;

/**
 * Runs a private, offline Kubo daemon with a fresh repository (test profile: no bootstrap peers, no
 * discovery, ports chosen by the system) and resolves once its RPC API and gateway listen.
 */
export async function startKubo(): Promise<LocalKubo> {
  const binary = findKubo();
  if (!binary) throw new ToolMissingError('ipfs (Kubo)', KUBO_INSTALL_HINT);
  const repo = mkdtempSync(join(tmpdir(), 'gateway-kubo-'));
  const child: ChildProcess = spawn(binary, ['daemon', '--init', '--init-profile=test', '--offline'], {
    env: { ...process.env, IPFS_PATH: repo },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const urls = await new Promise<{ api: string; gateway: string }>((resolve, reject) => {
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
        resolve({ api: found['RPC API'], gateway: found.Gateway });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`ipfs daemon exited with ${code}: ${output.slice(-800)}`)));
    child.once('error', reject);
  });
  child.stdout?.resume();
  child.stderr?.resume();
  return {
    apiUrl: urls.api,
    gatewayUrl: urls.gateway,
    pid: child.pid as number,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(repo, { recursive: true, force: true });
    },
  };
}
