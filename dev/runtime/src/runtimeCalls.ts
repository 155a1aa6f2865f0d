import { readFileSync } from 'node:fs';
import { runTask } from '@acala-network/chopsticks';
import { Metadata, TypeRegistry } from '@polkadot/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';

type Hex = `0x${string}`;

type Storage = Map<Hex, Hex>;

/** What the executor asks the host for, answered from `entries` (no offchain worker runs). */
const storageHost = (entries: Storage) => ({
  getStorage: async (key: Hex) => entries.get(key),
  getNextKey: async (prefix: Hex, key: Hex) =>
    [...entries.keys()].sort().find((candidate) => candidate.startsWith(prefix) && candidate > key),
  offchainGetStorage: async () => undefined,
  offchainTimestamp: async () => Date.now(),
  offchainRandomSeed: async () => u8aToHex(new Uint8Array(32)),
  offchainSubmitTransaction: async () => false,
});

/**
 * A runtime API call made on the Wasm itself (Frequency's one custom host function, which only the MSA offchain
 * worker calls, is left unresolved: it traps if reached), over the storage in `entries` (empty unless given), which takes the
 * call's writes.
 */
export async function callRuntime(
  wasm: Hex,
  method: string,
  argument: Hex = '0x',
  entries: Storage = new Map(),
): Promise<Uint8Array> {
  const answer = await runTask(
    {
      wasm,
      calls: [[method, [argument]]],
      mockSignatureHost: false,
      allowUnresolvedImports: true,
      runtimeLogLevel: 0,
    },
    storageHost(entries),
  );
  if ('Error' in answer) throw new Error(`the runtime's ${method} failed: ${answer.Error}`);
  for (const [key, value] of answer.Call.storageDiff)
    if (value === null) entries.delete(key);
    else entries.set(key, value);
  return hexToU8a(answer.Call.result);
}

export const readWasm = (path: string): Hex => u8aToHex(readFileSync(path)) as Hex;

/** The runtime's V15 metadata, decoded in a registry of its own. */
export async function runtimeMetadata(wasm: Hex): Promise<Metadata> {
  const registry = new TypeRegistry();
  const answer = await callRuntime(
    wasm,
    'Metadata_metadata_at_version',
    u8aToHex(registry.createType('u32', 15).toU8a()),
  );
  const opaque = registry.createType('Option<Bytes>', answer);
  if (opaque.isNone) throw new Error('the runtime has no V15 metadata');
  const metadata = new Metadata(registry, opaque.unwrap());
  registry.setMetadata(metadata);
  return metadata;
}
