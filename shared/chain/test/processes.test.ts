import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@frequency-gateway/devstack';
import { ChainTiming, TransactionTracker, type TransactionOutcome } from '../src/index.js';
import { startTestStack, tick, type TestStack } from './support/stack.js';

/** Runs the submit worker as its own process; resolves with the transactions it printed. */
function runWorker(stack: TestStack, redisUrl: string, count: number, label: string) {
  return new Promise<{ hash: string; nonce: number }[]>((resolve, reject) => {
    const worker = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=source',
        'test/support/submitWorker.ts',
        stack.devchain.url,
        redisUrl,
        String(count),
        label,
      ],
      { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    worker.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    worker.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    worker.once('exit', (code) =>
      code === 0
        ? resolve(
            out
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as { hash: string; nonce: number }),
          )
        : reject(new Error(`worker ${label} exited with ${code}: ${err.slice(-4000)}`)),
    );
  });
}

describe('two worker processes sharing one provider key', () => {
  let stack: TestStack;
  beforeAll(async () => (stack = await startTestStack()));
  afterAll(async () => stack?.close());

  it('submit 200 transactions without a nonce collision, and every one is settled once', async () => {
    const redisUrl = stack.redis().options as { host: string; port: number } as unknown as {
      host: string;
      port: number;
    };
    const url = `redis://${redisUrl.host}:${redisUrl.port}`;
    const [first, second] = await Promise.all([runWorker(stack, url, 100, 'a'), runWorker(stack, url, 100, 'b')]);
    const nonces = [...first!, ...second!].map((tx) => tx.nonce).sort((a, b) => a - b);
    expect(new Set(nonces).size).toBe(200);
    expect(nonces.at(-1)! - nonces[0]!).toBe(199);

    const outcomes: TransactionOutcome[] = [];
    // Both workers are done: the scan may submit again at once what a dropped connection kept from the node.
    const timing = new ChainTiming({ recordWithinMs: 200, submissionMs: 50, resubmitAfterMs: 300, gapRefillMs: 400 });
    const tracker = new TransactionTracker(stack.chain.api, stack.redis(), {
      prefix: 'mp',
      timing,
      onOutcome: async (outcome) => void outcomes.push(outcome),
    });
    await waitUntil(
      async () => {
        await tick(stack.chain, 1);
        await tracker.scanOnce();
        return (await tracker.pendingCount()) === 0;
      },
      60_000,
      'every recorded transaction settled',
    );
    expect(outcomes.length).toBe(200);
    expect(outcomes.every((outcome) => outcome.status === 'succeeded')).toBe(true);
    expect(new Set(outcomes.flatMap((outcome) => outcome.jobs)).size).toBe(200);
  }, 120_000);
});
