// devchain: a Frequency development chain on one port (WebSocket and HTTP JSON-RPC).
import { parseArgs } from 'node:util';
import { BasePathError } from './chain/basePath.js';
import { startDevchain, type Devchain } from './devchain.js';
import { GenesisFileError, readExtraGenesis } from './genesis/extraGenesis.js';

const USAGE = `usage: devchain [--port 9944] [--host 127.0.0.1] [--sealing instant|interval|manual] [--block-time 6000] [--create-empty-blocks true|false] [--finality-lag 0] [--genesis extra.json] [--stall-finality-at N] [--silence-subscriptions-at N] [--reorg-every N] [--reorg-depth 1-3] [--keep-blocks N|archive] [--base-path dir] [--upgrade-runtime-at N]`;

function parse() {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: '9944' },
      host: { type: 'string', default: '127.0.0.1' },
      sealing: { type: 'string', default: 'instant' },
      'block-time': { type: 'string' },
      'finality-lag': { type: 'string', default: '0' },
      'create-empty-blocks': { type: 'string', default: 'true' },
      genesis: { type: 'string' },
      'stall-finality-at': { type: 'string' },
      'silence-subscriptions-at': { type: 'string' },
      'reorg-every': { type: 'string' },
      'reorg-depth': { type: 'string' },
      'keep-blocks': { type: 'string' },
      'base-path': { type: 'string' },
      'upgrade-runtime-at': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const problems: string[] = [];
  const integer = (name: string, text: string | undefined, min: number) => {
    const value = Number(text);
    if (text !== undefined && (!Number.isInteger(value) || value < min))
      problems.push(`--${name} must be an integer ≥ ${min}`);
    return text === undefined ? undefined : value;
  };
  const sealing = values.sealing;
  if (sealing !== 'instant' && sealing !== 'interval' && sealing !== 'manual')
    problems.push('--sealing must be instant, interval or manual');
  const createEmpty = values['create-empty-blocks'];
  if (createEmpty !== 'true' && createEmpty !== 'false') problems.push('--create-empty-blocks must be true or false');
  const reorgEvery = integer('reorg-every', values['reorg-every'], 1);
  const reorgDepth = integer('reorg-depth', values['reorg-depth'], 1);
  if (reorgDepth !== undefined && reorgDepth > 3) problems.push('--reorg-depth must be 1, 2 or 3');
  const finalityLag = integer('finality-lag', values['finality-lag'], 0) ?? 0;
  const keepText = values['keep-blocks'];
  const keepBlocks =
    keepText === 'archive' ? ('archive' as const) : keepText === undefined ? undefined : Number(keepText);
  if (typeof keepBlocks === 'number' && !(Number.isInteger(keepBlocks) && keepBlocks >= 1))
    problems.push('--keep-blocks must be an integer ≥ 1, or archive');
  if (reorgEvery !== undefined && finalityLag < (reorgDepth ?? 1))
    problems.push('--reorg-every needs a --finality-lag of at least --reorg-depth (finalized blocks never change)');
  const options = {
    port: integer('port', values.port, 0) ?? 9944,
    host: values.host ?? '127.0.0.1',
    sealing: sealing as 'instant' | 'interval' | 'manual',
    createEmptyBlocks: createEmpty !== 'false',
    blockTimeMs: integer('block-time', values['block-time'], 1),
    finalityLag,
    genesis: values.genesis,
    stallFinalityAt: integer('stall-finality-at', values['stall-finality-at'], 0),
    silenceSubscriptionsAt: integer('silence-subscriptions-at', values['silence-subscriptions-at'], 1),
    basePath: values['base-path'],
    reorgEvery,
    reorgDepth,
    keepBlocks,
    upgradeRuntimeAt: integer('upgrade-runtime-at', values['upgrade-runtime-at'], 1),
  };
  if (values.help || problems.length > 0) {
    process.stderr.write(`${problems.map((p) => `devchain: ${p}\n`).join('')}${USAGE}\n`);
    process.exit(values.help ? 0 : 2);
  }
  return options;
}

const options = parse();
/** Starts the devchain; a genesis document that breaks a rule ends the process with its problems listed. */
async function start(): Promise<Devchain> {
  try {
    const genesis = options.genesis === undefined ? undefined : await readExtraGenesis(options.genesis);
    return await startDevchain({
      ...(genesis ? { genesis } : {}),
      port: options.port,
      host: options.host,
      sealing: options.sealing,
      finalityLag: options.finalityLag,
      createEmptyBlocks: options.createEmptyBlocks,
      ...(options.blockTimeMs === undefined ? {} : { blockTimeMs: options.blockTimeMs }),
      ...(options.stallFinalityAt === undefined ? {} : { stallFinalityAt: options.stallFinalityAt }),
      ...(options.silenceSubscriptionsAt === undefined
        ? {}
        : { silenceSubscriptionsAt: options.silenceSubscriptionsAt }),
      ...(options.basePath === undefined ? {} : { basePath: options.basePath }),
      ...(options.reorgEvery === undefined ? {} : { reorgEvery: options.reorgEvery }),
      ...(options.reorgDepth === undefined ? {} : { reorgDepth: options.reorgDepth }),
      ...(options.keepBlocks === undefined ? {} : { keepBlocks: options.keepBlocks }),
      ...(options.upgradeRuntimeAt === undefined ? {} : { upgradeRuntimeAt: options.upgradeRuntimeAt }),
      onInternalError: (error, method) =>
        process.stderr.write(`devchain: internal error in ${method}: ${String(error)}\n`),
    });
  } catch (error) {
    if (error instanceof BasePathError) {
      process.stderr.write(`devchain: ${error.message}\n`);
      process.exit(2);
    }
    if (!(error instanceof GenesisFileError)) throw error;
    process.stderr.write(error.problems.map((problem) => `devchain: --genesis ${problem}\n`).join(''));
    process.exit(2);
  }
}

const devchain = await start();
const kept =
  options.basePath === undefined
    ? ''
    : `, chain kept in ${options.basePath} (best block ${devchain.chain.best.number})`;
process.stdout.write(
  `devchain: ${options.sealing} sealing, finality lag ${options.finalityLag}${kept}, listening on ${devchain.url} (HTTP ${devchain.httpUrl})\n`,
);
const stop = () => void devchain.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
