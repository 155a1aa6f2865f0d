import type { ApiPromise } from '@polkadot/api';

/** A message stored on chain: its place (block, index), its schema, who sent it, and its CID or payload. */
export interface ChainMessage {
  blockNumber: number;
  index: number;
  schemaId: number;
  providerMsaId: bigint;
  /** The user it was sent for (unset: the provider's own message). */
  msaId?: bigint;
  /** IPFS messages: the CID (text) and the file's length. */
  cid?: string;
  payloadLength?: number;
  /** On-chain messages: the payload, hex. */
  payload?: `0x${string}`;
}

/** The node's paging limits for message reads. */
const MESSAGE_PAGE_SIZE = 10_000;
const MESSAGE_BLOCK_RANGE = 50_000;

/**
 * The messages of an intent in blocks `fromBlock` up to but excluding `toBlock`, in order (block, index),
 * every page read. Ranges longer than the node allows are read in parts.
 */
export async function messagesOf(
  api: ApiPromise,
  intentId: number,
  fromBlock: number,
  toBlock: number,
): Promise<ChainMessage[]> {
  const found: ChainMessage[] = [];
  let from = { block: fromBlock, index: 0 };
  while (from.block < toBlock) {
    const to = Math.min(toBlock, from.block + MESSAGE_BLOCK_RANGE);
    const page = await api.rpc.messages.getByIntentId(intentId, {
      from_block: from.block,
      from_index: from.index,
      to_block: to,
      page_size: MESSAGE_PAGE_SIZE,
    });
    for (const message of page.content) {
      found.push({
        blockNumber: message.block_number.toNumber(),
        index: message.index.toNumber(),
        schemaId: message.schema_id.toNumber(),
        providerMsaId: message.provider_msa_id.toBigInt(),
        ...(message.msa_id.isSome ? { msaId: message.msa_id.unwrap().toBigInt() } : {}),
        ...(message.cid.isSome ? { cid: new TextDecoder().decode(message.cid.unwrap().toU8a(true)) } : {}),
        ...(message.payload_length.isSome ? { payloadLength: message.payload_length.unwrap().toNumber() } : {}),
        ...(message.payload.isSome ? { payload: message.payload.unwrap().toHex() } : {}),
      });
    }
    from =
      page.has_next.isTrue && page.next_block.isSome
        ? { block: page.next_block.unwrap().toNumber(), index: page.next_index.unwrapOr(0).toNumber() }
        : { block: to, index: 0 };
  }
  return found;
}
