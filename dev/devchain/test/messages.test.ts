import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { base58btc } from 'multiformats/bases/base58';
import { base32 } from 'multiformats/bases/base32';
import { base64 } from 'multiformats/bases/base64';
import { connect, submit, type Connected } from './support/client.js';

const BROADCAST_SCHEMA = 17;
const BROADCAST_INTENT = 17;

describe('Messages through a real client', () => {
  let c: Connected;
  beforeAll(async () => (c = await connect()));
  afterAll(async () => c.close());

  const cidOf = async (text: string, version: 0 | 1 = 1) => {
    const digest = await sha256.digest(new TextEncoder().encode(text));
    return version === 0 ? CID.createV0(digest).toString(base58btc) : CID.createV1(0x55, digest).toString();
  };
  const moduleError = (outcome: Awaited<ReturnType<typeof submit>>) => {
    const error = outcome.result.dispatchError;
    if (!error?.isModule) return error?.toString();
    const meta = c.api.registry.findMetaError(error.asModule);
    return `${meta.section}.${meta.name}`;
  };
  const ipfsMessage = (schemaId: number, cid: string, length = 1234) =>
    c.api.tx.frequencyTxPayment.payWithCapacity(c.api.tx.messages.addIpfsMessage(schemaId, cid, length));

  it('stores an IPFS message under its block, intent and index, and announces the block', async () => {
    const cid = await cidOf('hello dsnp');
    const outcome = await submit(ipfsMessage(BROADCAST_SCHEMA, cid), c.alice);
    expect(outcome.result.events.map(({ event }) => `${event.section}.${event.method}`)).toContain(
      'messages.MessagesInBlock',
    );
    const block = (await c.api.rpc.chain.getHeader(outcome.result.status.asFinalized)).number.toNumber();
    const stored = (await c.api.query.messages.messagesV3(block, BROADCAST_INTENT, 0)).unwrap();
    expect(stored.providerMsaId.toNumber()).toBe(1);
    expect(stored.msaId.isNone).toBe(true);
    expect(stored.schemaId.toNumber()).toBe(BROADCAST_SCHEMA);
    const [binary, length] = c.api.createType('(Bytes, u32)', stored.payload.toU8a(true)) as unknown as [
      { toU8a(bare: boolean): Uint8Array },
      { toNumber(): number },
    ];
    expect(CID.decode(binary.toU8a(true)).toString()).toBe(cid);
    expect(length.toNumber()).toBe(1234);
  });

  it('refuses CIDv0, malformed CIDs and schemas that do not live on IPFS', async () => {
    expect(moduleError(await submit(ipfsMessage(BROADCAST_SCHEMA, await cidOf('v0', 0)), c.alice))).toBe(
      'messages.UnsupportedCidVersion',
    );
    expect(moduleError(await submit(ipfsMessage(BROADCAST_SCHEMA, 'bnot-a-cid'), c.alice))).toBe('messages.InvalidCid');
    expect(moduleError(await submit(ipfsMessage(7, await cidOf('x')), c.alice))).toBe(
      'messages.InvalidPayloadLocation',
    );
    expect(moduleError(await submit(ipfsMessage(9999, await cidOf('x')), c.alice))).toBe('messages.InvalidSchemaId');
    const onchain = c.api.tx.frequencyTxPayment.payWithCapacity(
      c.api.tx.messages.addOnchainMessage(null, BROADCAST_SCHEMA, '0x01'),
    );
    expect(moduleError(await submit(onchain, c.alice))).toBe('messages.InvalidPayloadLocation');
  });

  it('takes a CID in any multibase (base64, base32) and stores its binary form', async () => {
    const digest = await sha256.digest(new TextEncoder().encode('multibase'));
    const cid = CID.createV1(0x55, digest);
    for (const text of [cid.toString(base64), cid.toString(base32)]) {
      const outcome = await submit(ipfsMessage(BROADCAST_SCHEMA, text), c.alice);
      expect(moduleError(outcome)).toBeUndefined();
      const block = (await c.api.rpc.chain.getHeader(outcome.result.status.asFinalized)).number.toNumber();
      const stored = (await c.api.query.messages.messagesV3(block, BROADCAST_INTENT, 0)).unwrap();
      const [binary] = c.api.createType('(Bytes, u32)', stored.payload.toU8a(true)) as unknown as [
        { toU8a(bare: boolean): Uint8Array },
      ];
      expect(CID.decode(binary.toU8a(true)).equals(cid)).toBe(true);
    }
    expect(moduleError(await submit(ipfsMessage(BROADCAST_SCHEMA, 'zz'), c.alice))).toBe('messages.InvalidCid');
  });
});
