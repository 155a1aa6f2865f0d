import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import './quietChopsticks.js';
import { BuildBlockMode, setupWithServer, type Blockchain } from '@acala-network/chopsticks';
import { DEV_PROVIDER, devKeyring } from '@frequency-gateway/devchain';
import { ApiPromise, WsProvider } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { KeyringPair } from '@polkadot/keyring/types';
import { TypeRegistry } from '@polkadot/types';
import { u8aToHex } from '@polkadot/util';
import { runtimeCacheDir } from './cache.js';
import { callRuntime, readWasm } from './runtimeCalls.js';

type Hex = `0x${string}`;
const CODE_KEY = '0x3a636f6465'; // ":code"
const PRESET = 'development';

/**
 * The runtime's own development genesis: its `GenesisBuilder` API's "development" preset (the JSON the node's
 * `--dev` chain spec carries), built into storage by the runtime itself, with `:code`. Cached by the code's hash.
 */
export async function developmentGenesis(wasm: Hex, codeHash: string): Promise<Record<Hex, Hex>> {
  const cached = join(runtimeCacheDir(), 'genesis', `${codeHash}-${PRESET}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8')) as Record<Hex, Hex>;
  const registry = new TypeRegistry();
  const entries = new Map<Hex, Hex>();
  const preset = registry.createType(
    'Option<Bytes>',
    await callRuntime(wasm, 'GenesisBuilder_get_preset', u8aToHex(registry.createType('Option<Text>', PRESET).toU8a())),
  );
  if (preset.isNone) throw new Error(`the runtime has no "${PRESET}" genesis preset`);
  const built = registry.createType(
    'Result<(), Text>',
    await callRuntime(
      wasm,
      'GenesisBuilder_build_state',
      u8aToHex(registry.createType('Bytes', preset.unwrap()).toU8a()),
      entries,
    ),
  );
  if (built.isErr) throw new Error(`the runtime refused its own "${PRESET}" preset: ${built.asErr.toString()}`);
  const top = Object.fromEntries([...entries, [CODE_KEY, wasm]]) as Record<Hex, Hex>;
  mkdirSync(join(runtimeCacheDir(), 'genesis'), { recursive: true });
  writeFileSync(cached, JSON.stringify(top));
  return top;
}

export interface RealChain {
  /** The JSON-RPC WebSocket on loopback, as the gateway's FREQUENCY_API_WS_URL. */
  url: string;
  chain: Blockchain;
  close(): Promise<void>;
}

export interface RealChainOptions {
  /** The runtime Wasm (from `buildRuntime`). */
  wasm: string;
  codeHash: string;
  /** 0 (the default) picks a free port on loopback. */
  port?: number;
}

async function submitAs(
  api: ApiPromise,
  signer: KeyringPair,
  nonce: number,
  call: SubmittableExtrinsic<'promise'>,
): Promise<void> {
  await new Promise<void>((done, fail) => {
    call
      .signAndSend(signer, { nonce }, ({ status, dispatchError }) => {
        if (dispatchError !== undefined) {
          const detail = dispatchError.isModule ? api.registry.findMetaError(dispatchError.asModule) : undefined;
          fail(
            new Error(
              `${call.method.section}.${call.method.method}: ${detail ? `${detail.section}.${detail.name}` : dispatchError.toString()}`,
            ),
          );
        } else if (status.isInBlock || status.isFinalized) done();
      })
      .catch(fail);
  });
}

/**
 * The real runtime under chopsticks, from its development genesis, sealing a block for each transaction (instant
 * sealing: every block is final at once), set up as the devchain's genesis is: //Alice as MSA 1, a provider named
 * as the devchain's, with the same Capacity stake, through the same extrinsics the gateway's local setup sends.
 */
export async function startRealChain(options: RealChainOptions): Promise<RealChain> {
  const wasm = readWasm(options.wasm);
  const top = await developmentGenesis(wasm, options.codeHash);
  const server = await setupWithServer({
    genesis: {
      id: 'dev',
      name: 'Development (real runtime)',
      properties: { ss58Format: 42, tokenDecimals: 8, tokenSymbol: 'UNIT' },
      genesis: { raw: { top } },
    },
    host: '127.0.0.1',
    port: options.port ?? 0,
    'build-block-mode': BuildBlockMode.Instant,
    // Frequency's custom host function (the MSA offchain worker's) is not chopsticks'; it traps if ever called.
    'allow-unresolved-imports': true,
  });
  const url = `ws://${server.addr}`;
  const api = await ApiPromise.create({ provider: new WsProvider(url), noInitWarn: true });
  try {
    const alice = (await devKeyring(42)).getPairs()[0] as KeyringPair;
    // Nonces given: the head a block's "in block" status announces may not be the one the next signing reads.
    await submitAs(api, alice, 0, api.tx.msa.create());
    await submitAs(api, alice, 1, api.tx.msa.createProvider(DEV_PROVIDER.name));
    await submitAs(api, alice, 2, api.tx.capacity.stake(1, DEV_PROVIDER.stake));
  } finally {
    await api.disconnect();
  }
  return { url, chain: server.chain, close: () => server.close() };
}
