import { parseExtraGenesis, startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { ChainQueries, connectChain, type ChainConnection } from '../src/index.js';

describe('typed chain queries', () => {
  let devchain: Devchain;
  let chain: ChainConnection;
  let queries: ChainQueries;
  beforeAll(async () => {
    const genesis = await parseExtraGenesis({
      users: [{ account: '//Dave', handle: 'dave', delegations: [{ provider: 1, intents: [2, 17] }] }],
    });
    devchain = await startDevchain({ genesis });
    chain = await connectChain({ url: devchain.url });
    queries = new ChainQueries(chain.api);
  });
  afterAll(async () => {
    await chain?.close();
    await devchain?.close();
  });

  it('reads MSAs, keys, providers and handles', async () => {
    const dave = '5DAAnrj7VHTznn2AWBemMuyBwZWs6FNFjdyVXUeYum3PTXFy';
    expect(await queries.msaIdOf(dave)).toBe(2n);
    expect(await queries.msaIdOf('5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty')).toBeUndefined();
    expect(await queries.keysOf(2)).toEqual([dave]);
    expect([await queries.isProvider(1), await queries.isProvider(2)]).toEqual([true, false]);
    const handle = await queries.handleOf(2);
    expect(handle).toMatchObject({ base: 'dave', canonical: 'dave' });
    expect(await queries.msaOfHandle(handle!.display)).toBe(2n);
    expect([await queries.isValidHandle('dave'), await queries.isValidHandle('admin')]).toEqual([true, false]);
  });

  it('reads delegations per intent', async () => {
    expect(await queries.delegation(2, 1)).toEqual({
      providerId: 1n,
      revokedAt: 0,
      grants: [
        { intentId: 2, revokedAt: 0, explicitRevokedAt: 0 },
        { intentId: 17, revokedAt: 0, explicitRevokedAt: 0 },
      ],
    });
    expect(await queries.delegation(2, 5)).toBeUndefined();
    expect((await queries.delegations(2)).map((d) => d.providerId)).toEqual([1n]);
    expect([await queries.isDelegatedFor(2, 1, 17), await queries.isDelegatedFor(2, 1, 3)]).toEqual([true, false]);
  });

  it('resolves intents by name to their latest schema, and reads schemas with their models', async () => {
    const broadcast = await queries.intentByName('dsnp.broadcast');
    expect(broadcast).toMatchObject({ intentId: 17, payloadLocation: 'IPFS', schemaIds: [17], latestSchemaId: 17 });
    expect(await queries.intentByName('dsnp.missing')).toBeUndefined();
    const schema = await queries.schema(17);
    expect(schema).toMatchObject({ intentId: 17, modelType: 'Parquet', status: 'Active' });
    expect(JSON.parse(new TextDecoder().decode(schema!.model))[0].name).toBe('announcementType');
  });

  it('reads capacity, the epoch and block heads', async () => {
    const capacity = await queries.capacity(1);
    expect(capacity?.totalIssued).toBe(40_000_000_000_000n);
    expect((await queries.epoch()).length).toBe(100);
    const [finalized, best] = await Promise.all([queries.finalizedBlock(), queries.bestBlock()]);
    expect(finalized.number).toBeLessThanOrEqual(best.number);
  });
});
