import { stringToHex } from '@polkadot/util';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { connect, eventNames, moduleError, sponsor, submit, type Connected } from './support/client.js';

/** The runtime APIs the gateway calls through `api.call` (state_call), typed by the V15 metadata. */
describe('Frequency runtime APIs through api.call', () => {
  let c: Connected;
  let bobMsa: number;
  beforeAll(async () => {
    c = await connect();
    bobMsa = await sponsor(c.api, c.alice, c.bob, [2, 17]);
  });
  afterAll(async () => c.close());

  it('declares every runtime API of the node in the metadata, so api.call has them', () => {
    expect(Object.keys(c.api.call).sort()).toEqual(
      expect.arrayContaining([
        'handlesRuntimeApi',
        'messagesRuntimeApi',
        'msaRuntimeApi',
        'schemasRuntimeApi',
        'statefulStorageRuntimeApi',
        'transactionPaymentApi',
      ]),
    );
  });

  it('MsaRuntimeApi: delegations of an MSA, with effective revocations', async () => {
    const delegation = (await c.api.call.msaRuntimeApi.getDelegationForMsaAndProvider(bobMsa, 1)).unwrap();
    expect(delegation.providerId.toNumber()).toBe(1);
    expect(delegation.revokedAt.toNumber()).toBe(0);
    expect(delegation.permissions.map((p) => [p.grantedId.toNumber(), p.revokedAt.toNumber()])).toEqual([
      [2, 0],
      [17, 0],
    ]);
    expect((await c.api.call.msaRuntimeApi.getDelegationForMsaAndProvider(bobMsa, 7)).isNone).toBe(true);
    const all = await c.api.call.msaRuntimeApi.getAllGrantedDelegationsByMsaId(bobMsa);
    expect(all.map((d) => d.providerId.toNumber())).toEqual([1]);
    const best = (await c.api.rpc.chain.getHeader()).number.toNumber();
    expect((await c.api.call.msaRuntimeApi.hasDelegation(bobMsa, 1, best, 17)).isTrue).toBe(true);
    expect((await c.api.call.msaRuntimeApi.hasDelegation(bobMsa, 1, best, 5)).isTrue).toBe(false);
  });

  it('SchemasRuntimeApi: intents by name and id with their schemas, schema models from @dsnp/schemas', async () => {
    const named = (await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName('dsnp.broadcast')).unwrap();
    expect(named.map((n) => [n.name.toUtf8(), n.entityId.asIntent.toNumber()])).toEqual([['dsnp.broadcast', 17]]);
    const namespace = (await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName('DSNP')).unwrap();
    expect(namespace.length).toBe(20);
    expect((await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName('dsnp.nothing')).isNone).toBe(true);
    const intent = (await c.api.call.schemasRuntimeApi.getIntentById(17, true)).unwrap();
    expect(intent.payloadLocation.toString()).toBe('IPFS');
    expect(intent.schemaIds.unwrap().map((id) => id.toNumber())).toEqual([17]);
    const keys = (await c.api.call.schemasRuntimeApi.getIntentById(7, false)).unwrap();
    expect(keys.settings.map(String)).toEqual(['AppendOnly', 'SignatureRequired']);
    expect(keys.schemaIds.isNone).toBe(true);
    const schema = (await c.api.call.schemasRuntimeApi.getSchemaById(17)).unwrap();
    expect(schema.modelType.toString()).toBe('Parquet');
    const columns = JSON.parse(schema.model.toUtf8()) as { name: string }[];
    expect(columns.map((column) => column.name)).toContain('contentHash');
  });

  it('creates an intent and a schema through sudo, and the new schema becomes the latest of its intent', async () => {
    const created = await submit(
      c.api.tx.sudo.sudo(c.api.tx.schemas.createIntentViaGovernance(c.alice.address, 'IPFS', [], 'test.thing')),
      c.alice,
    );
    expect(eventNames(created)).toContain('schemas.IntentCreated');
    const intentId = (await c.api.query.schemas.currentIntentIdentifierMaximum()).toNumber();
    expect(intentId).toBe(16001);
    const model = JSON.stringify([{ name: 'x', column_type: 'STRING', compression: 'GZIP', bloom_filter: false }]);
    for (let i = 0; i < 2; i++) {
      const schema = await submit(
        c.api.tx.sudo.sudo(c.api.tx.schemas.createSchemaViaGovernanceV3(c.alice.address, intentId, model, 'Parquet')),
        c.alice,
      );
      expect(eventNames(schema)).toContain('schemas.SchemaCreated');
    }
    const intent = (await c.api.call.schemasRuntimeApi.getIntentById(intentId, true)).unwrap();
    expect(intent.schemaIds.unwrap().map((id) => id.toNumber())).toEqual([16001, 16002]);
    const lookup = (await c.api.call.schemasRuntimeApi.getRegisteredEntitiesByName('Test.Thing')).unwrap();
    expect(lookup[0]!.entityId.asIntent.toNumber()).toBe(intentId);

    const duplicate = await submit(
      c.api.tx.sudo.sudo(c.api.tx.schemas.createIntentViaGovernance(c.alice.address, 'IPFS', [], 'test.thing')),
      c.alice,
    );
    const sudid = duplicate.result.events.find(({ event }) => event.method === 'Sudid')!.event.data[0] as unknown as {
      asErr: { asModule: Parameters<typeof c.api.registry.findMetaError>[0] };
    };
    expect(c.api.registry.findMetaError(sudid.asErr.asModule).name).toBe('NameAlreadyExists');
    const badModel = await submit(
      c.api.tx.schemas.createSchemaV4(intentId, stringToHex('not json'), 'Parquet'),
      c.alice,
    );
    expect(moduleError(c.api, badModel)).toBe('schemas.InvalidSchema');
    const settings = await submit(c.api.tx.schemas.createIntent('test.append', 'IPFS', ['AppendOnly']), c.alice);
    expect(moduleError(c.api, settings)).toBe('schemas.InvalidSetting');
  });

  it('MessagesRuntimeApi: messages of an intent over a block range, paginated', async () => {
    const cids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const cid = CID.createV1(0x55, await sha256.digest(new TextEncoder().encode(text))).toString();
      cids.push(cid);
      await submit(c.api.tx.frequencyTxPayment.payWithCapacity(c.api.tx.messages.addIpfsMessage(17, cid, 10)), c.alice);
    }
    const best = (await c.api.rpc.chain.getHeader()).number.toNumber();
    const page = await c.api.call.messagesRuntimeApi.getMessagesByIntentId(17, {
      fromBlock: 0,
      fromIndex: 0,
      toBlock: best + 1,
      pageSize: 2,
    });
    expect(page.content.map((m) => m.cid.unwrap().toUtf8())).toEqual(cids.slice(0, 2));
    expect(page.hasNext.isTrue).toBe(true);
    const rest = await c.api.call.messagesRuntimeApi.getMessagesByIntentId(17, {
      fromBlock: page.nextBlock.unwrap(),
      fromIndex: page.nextIndex.unwrap(),
      toBlock: best + 1,
      pageSize: 2,
    });
    expect(rest.content.map((m) => m.cid.unwrap().toUtf8())).toEqual(cids.slice(2));
    expect(rest.hasNext.isTrue).toBe(false);
    expect(rest.content[0]!.providerMsaId.toNumber()).toBe(1);
    expect(rest.content[0]!.payloadLength.unwrap().toNumber()).toBe(10);
    const invalid = await c.api.call.messagesRuntimeApi.getMessagesByIntentId(17, {
      fromBlock: 5,
      fromIndex: 0,
      toBlock: 5,
      pageSize: 2,
    });
    expect(invalid.content.length).toBe(0);
  });
});
