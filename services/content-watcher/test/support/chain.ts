import { connectChain, loadProviderKey, type ChainApi, type ChainConnection } from '@frequency-gateway/chain';
import type { DevchainProcess } from '@frequency-gateway/devchain';
import type { LocalKubo, LocalRedis } from '@frequency-gateway/devstack';
import { startGatewayBacking } from '@frequency-gateway/devstack/gateway';
import {
  INTENT_OF_ANNOUNCEMENT,
  parseParquetModel,
  readBatch,
  writeBatch,
  type AnnouncementType,
} from '@frequency-gateway/dsnp';
import { KuboStore } from '@frequency-gateway/storage';

// What the watcher follows, put on chain the way a provider does (the content publishing service, or any
// other): Parquet batch files in IPFS announced with messages.addIpfsMessage, and on-chain messages. The
// provider is //Alice, MSA 1, the devchain's sudo key.

/** A signed-to-be call of the chain (what api.tx builds). */
type Extrinsic = ReturnType<ChainApi['tx']['messages']['addIpfsMessage']>;

/** The first intent and schema created after genesis get this id. */
export const FIRST_NEW_ID = 16001;

/** The chain, Redis and Kubo the watcher runs against, each its own. */
export interface WatchedChain {
  devchain: DevchainProcess;
  redis: LocalRedis;
  kubo: LocalKubo;
  chain: ChainConnection;
  stop(): Promise<void>;
}

export async function startWatchedChain(): Promise<WatchedChain> {
  const backing = await startGatewayBacking({ sealing: 'interval', blockTimeMs: 500, finalityLag: 2, genesis: {} });
  const chain = await connectChain({ url: backing.chain.url });
  return {
    devchain: backing.chain,
    redis: backing.redis,
    kubo: backing.kubo!,
    chain,
    stop: async () => {
      await chain.close();
      await backing.stop();
    },
  };
}

/**
 * Signs the calls as //Alice with consecutive nonces, submits them together and resolves with the number of
 * the block that includes each, once all are finalized.
 */
export async function asProvider(chain: ChainConnection, calls: Extrinsic[]): Promise<number[]> {
  const alice = await loadProviderKey('//Alice');
  const first = (await chain.api.rpc.system.accountNextIndex(alice.address)).toNumber();
  return Promise.all(
    calls.map(
      (call, index) =>
        new Promise<number>((resolve, reject) => {
          const what = `${call.method.section}.${call.method.method}`;
          call
            .signAndSend(alice.address, { signer: alice.signer, nonce: first + index }, (result) => {
              if (result.dispatchError) reject(new Error(`${what} failed: ${result.dispatchError.type}`));
              else if (result.status.isFinalized)
                chain.api.rpc.chain
                  .getHeader(result.status.asFinalized)
                  .then((header) => resolve(header.number.toNumber()), reject);
              else if (result.isError) reject(new Error(`${what}: ${result.status.type}`));
            })
            .catch(reject);
        }),
    ),
  );
}

/** Registers an on-chain intent with one Avro schema, {n: int} (ids FIRST_NEW_ID on a fresh devchain). */
export async function createOnChainIntent(chain: ChainConnection, name: string): Promise<void> {
  const { api } = chain;
  const alice = await loadProviderKey('//Alice');
  const model = JSON.stringify({ type: 'record', name: 'Note', fields: [{ name: 'n', type: 'int' }] });
  await asProvider(chain, [
    api.tx.sudo.sudo(api.tx.schemas.createIntentViaGovernance(alice.address, 'OnChain', [], name)),
  ]);
  await asProvider(chain, [
    api.tx.sudo.sudo(api.tx.schemas.createSchemaViaGovernanceV3(alice.address, FIRST_NEW_ID, model, 'AvroBinary')),
  ]);
}

/** One announcement row of a batch file (fromId as a bigint, as the Parquet writer takes it). */
export type AnnouncementRow = { announcementType: AnnouncementType; fromId: bigint } & Record<string, unknown>;

/** A batch file on chain: its announcement type, its CID, the block that announced it and its rows as read back. */
export interface PublishedBatch {
  type: AnnouncementType;
  intentId: number;
  cid: string;
  blockNumber: number;
  rows: Record<string, unknown>[];
}

/**
 * Writes each row as a batch file of its own in its intent's latest schema, adds it to Kubo and announces it
 * with messages.addIpfsMessage; resolves once every announcement is finalized.
 */
export async function publishBatches(watched: WatchedChain, rows: AnnouncementRow[]): Promise<PublishedBatch[]> {
  const { api, queries } = watched.chain;
  const store = new KuboStore({ url: watched.kubo.apiUrl });
  const files = [];
  for (const row of rows) {
    const intent = (await queries.intentByName(INTENT_OF_ANNOUNCEMENT[row.announcementType]))!;
    const schema = (await queries.schema(intent.latestSchemaId!))!;
    const stored = await store.add(await writeBatch(parseParquetModel(schema.model), [row]));
    files.push({ type: row.announcementType, intentId: intent.intentId, schemaId: schema.schemaId, ...stored });
  }
  const blocks = await asProvider(
    watched.chain,
    files.map((file) => api.tx.messages.addIpfsMessage(file.schemaId, file.cid, file.size)),
  );
  return Promise.all(
    files.map(async (file, index) => ({
      type: file.type,
      intentId: file.intentId,
      cid: file.cid,
      blockNumber: blocks[index]!,
      rows: await readBatch(
        Buffer.from(await (await fetch(`${watched.kubo.gatewayUrl}/ipfs/${file.cid}`)).arrayBuffer()),
      ),
    })),
  );
}

/** A note in IPFS as a broadcast or reply points at it: its URL and DSNP content hash. */
export async function storeNote(kubo: LocalKubo, text: string): Promise<{ url: string; contentHash: string }> {
  const note = {
    '@context': 'https://www.w3.org/ns/activitystreams',
    type: 'Note',
    content: text,
    mediaType: 'text/plain',
  };
  const stored = await new KuboStore({ url: kubo.apiUrl }).add(new TextEncoder().encode(JSON.stringify(note)));
  return { url: `${kubo.gatewayUrl}/ipfs/${stored.cid}`, contentHash: stored.dsnpHash };
}
