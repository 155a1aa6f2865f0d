import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export interface DevchainProcessOptions {
  port?: number;
  sealing?: 'instant' | 'interval' | 'manual';
  createEmptyBlocks?: boolean;
  blockTimeMs?: number;
  finalityLag?: number;
  /** An extra genesis document (JSON file path). */
  genesisFile?: string;
  /** Keep the chain in this directory (`--base-path`). */
  basePath?: string;
  /** Reorganise the best chain every this many sealed blocks (`--reorg-every`), by `reorgDepth` (`--reorg-depth`). */
  reorgEvery?: number;
  reorgDepth?: number;
  /** How many of the latest blocks the devchain keeps (`--keep-blocks`), or all of them. */
  keepBlocks?: number | 'archive';
}

/** The devchain as a process of its own: what e2e suites and multi-process tests run. */
export interface DevchainProcess {
  url: string;
  pid: number;
  /** Ends it: SIGTERM by default, SIGKILL for a crash. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const SOURCE_CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

/** Starts the devchain CLI (from source through tsx, or built) and resolves with its WebSocket URL once it listens. */
export async function spawnDevchain(options: DevchainProcessOptions = {}): Promise<DevchainProcess> {
  const fromSource = existsSync(SOURCE_CLI);
  const args = fromSource ? ['--import', 'tsx', '--conditions=source', SOURCE_CLI] : [BUILT_CLI];
  args.push('--port', String(options.port ?? 0), '--sealing', options.sealing ?? 'instant');
  args.push('--finality-lag', String(options.finalityLag ?? 0));
  if (options.blockTimeMs !== undefined) args.push('--block-time', String(options.blockTimeMs));
  if (options.createEmptyBlocks !== undefined) args.push('--create-empty-blocks', String(options.createEmptyBlocks));
  if (options.genesisFile !== undefined) args.push('--genesis', options.genesisFile);
  if (options.basePath !== undefined) args.push('--base-path', options.basePath);
  if (options.reorgEvery !== undefined) args.push('--reorg-every', String(options.reorgEvery));
  if (options.reorgDepth !== undefined) args.push('--reorg-depth', String(options.reorgDepth));
  if (options.keepBlocks !== undefined) args.push('--keep-blocks', String(options.keepBlocks));
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const url = await new Promise<string>((resolve, reject) => {
    const lines: string[] = [];
    child.stderr.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const match = /listening on (ws:\/\/\S+)/.exec(line);
      if (match) resolve(match[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`devchain exited with ${code}: ${lines.join('').slice(-800)}`)));
  });
  return {
    url,
    pid: child.pid as number,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await exited;
    },
  };
}
