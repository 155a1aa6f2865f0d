import { callJson } from '@frequency-gateway/devstack';
import { ChainQueries, loadProviderKey } from '@frequency-gateway/chain';
import { parseExtraGenesis } from '@frequency-gateway/devchain';
import type { Queue } from 'bullmq';
import type { OnChainJob } from '../src/jobs/publish.js';
import { CONTENT_PUBLISHING_QUEUES } from '../src/queues.js';
import { createOnChainIntent, FIRST_NEW_ID, grantIntents } from './support/chainSetup.js';
import { startApiStack, type ApiStack } from './support/stack.js';

const ON_CHAIN = FIRST_NEW_ID;
const PUBLISHED = '2024-05-01T12:00:00Z';

describe('on-chain content', () => {
  let stack: ApiStack;
  let publish: Queue<OnChainJob>;
  let dave: bigint;
  let eve: bigint;
  let ipfsSchema: number;

  const post = (body: unknown, path = '/v3/content/on-chain') => callJson(stack.url, 'POST', path, body);

  beforeAll(async () => {
    stack = await startApiStack(
      {},
      {
        genesis: await parseExtraGenesis({
          users: [
            { account: '//Dave', delegations: [{ provider: 1, intents: [2] }] },
            { account: '//Eve', delegations: [{ provider: 1, intents: [2] }] },
          ],
        }),
      },
    );
    publish = stack.queue(CONTENT_PUBLISHING_QUEUES.publish);
    const { api } = stack.chain;
    await createOnChainIntent(api, 'test.on-chain');
    // Dave delegates the new intent to the provider (Eve keeps only her genesis delegation).
    await grantIntents(api, '//Dave', [2, ON_CHAIN]);
    const queries = new ChainQueries(api);
    dave = (await queries.msaIdOf((await loadProviderKey('//Dave')).address))!;
    eve = (await queries.msaIdOf((await loadProviderKey('//Eve')).address))!;
    ipfsSchema = (await queries.intentByName('dsnp.broadcast'))!.latestSchemaId!;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('publishes as the provider with a schemaId: 202 and a job with what the worker needs', async () => {
    const answer = await post({ schemaId: ON_CHAIN, payload: '0xAB12', published: PUBLISHED });
    expect(answer.status).toBe(202);
    expect(Object.keys(answer.body)).toEqual(['referenceId']);
    const job = (await stack.jobOf(publish, answer.body.referenceId))!;
    expect(job.name).toBe('on-chain');
    expect(job.data).toEqual({
      referenceId: answer.body.referenceId,
      schemaId: ON_CHAIN,
      intentId: ON_CHAIN,
      payload: '0xab12',
      published: PUBLISHED,
      acceptedAt: expect.any(String),
    });
  });

  it('publishes for a delegating user with the latest schema of an intent', async () => {
    const answer = await post({
      intentName: 'Test.On-Chain',
      msaId: Number(dave),
      payload: '0x01',
      published: PUBLISHED,
    });
    expect(answer.status).toBe(202);
    expect((await stack.jobOf(publish, answer.body.referenceId))!.data).toMatchObject({
      schemaId: ON_CHAIN,
      onBehalfOf: dave.toString(),
    });
    const asText = await post({
      intentName: 'test.on-chain',
      schemaId: ON_CHAIN,
      msaId: dave.toString(),
      payload: '0x01',
      published: PUBLISHED,
    });
    expect(asText.body.referenceId).toBe(answer.body.referenceId);
    expect((await callJson(stack.url, 'GET', `/v1/requests/${answer.body.referenceId}`)).body).toMatchObject({
      kind: 'on-chain',
      msaId: dave.toString(),
      state: 'queued',
    });
  });

  it('401 when the user has not delegated the intent to the provider', async () => {
    const answer = await post({ schemaId: ON_CHAIN, msaId: eve.toString(), payload: '0x01', published: PUBLISHED });
    expect(answer.status).toBe(401);
    expect(answer.body.message).toMatch(/^body\.msaId: user \d+ has not delegated intent 16001 to provider 1/);
  });

  it("413 for a payload over the chain's limit", async () => {
    const limit = (
      stack.chain.api.consts.messages.messagesMaxPayloadSizeBytes as unknown as { toNumber(): number }
    ).toNumber();
    const ok = await post({ schemaId: ON_CHAIN, payload: `0x${'00'.repeat(limit)}`, published: PUBLISHED });
    expect(ok.status).toBe(202);
    const big = await post({ schemaId: ON_CHAIN, payload: `0x${'00'.repeat(limit + 1)}`, published: PUBLISHED });
    expect(big.status).toBe(413);
    expect(big.body.message).toBe(`body.payload: ${limit + 1} bytes, more than the chain's limit of ${limit}`);
  });

  it('422 for an unknown schema or one that does not store on chain', async () => {
    const unknown = await post({ schemaId: 9999, payload: '0x01', published: PUBLISHED });
    expect(unknown.status).toBe(422);
    expect(unknown.body.message).toEqual(['body.schemaId: schema 9999 does not exist']);
    const ipfs = await post({ schemaId: ipfsSchema, payload: '0x01', published: PUBLISHED });
    expect(ipfs.status).toBe(422);
    expect(ipfs.body.message).toEqual([`body.schemaId: schema ${ipfsSchema} stores its payload in IPFS, not on chain`]);
  });

  it.each([
    [
      'no schema nor intent',
      { payload: '0x01', published: PUBLISHED },
      /^body\.schemaId: is required when intentName is not given/,
    ],
    [
      'a payload without 0x',
      { schemaId: ON_CHAIN, payload: 'ab', published: PUBLISHED },
      /^body\.payload: must be 0x-prefixed hex/,
    ],
    [
      'half a byte',
      { schemaId: ON_CHAIN, payload: '0xabc', published: PUBLISHED },
      /^body\.payload: must be 0x-prefixed hex of whole bytes/,
    ],
    ['no payload', { schemaId: ON_CHAIN, published: PUBLISHED }, /^body\.payload: is required/],
    [
      'a bad date',
      { schemaId: ON_CHAIN, payload: '0x01', published: '01/05/2024' },
      /^body\.published: must be an ISO 8601/,
    ],
    [
      'a malformed intent name',
      { intentName: 'nodot', payload: '0x01', published: PUBLISHED },
      /^body\.intentName: must be an intent name/,
    ],
    [
      'an unknown intent',
      { intentName: 'test.nothing', payload: '0x01', published: PUBLISHED },
      /^body\.intentName: "test\.nothing" is not a registered intent/,
    ],
    [
      'a schema of another intent',
      { intentName: 'test.on-chain', schemaId: 1, payload: '0x01', published: PUBLISHED },
      /^body\.schemaId: schema 1 does not belong to intent "test\.on-chain"/,
    ],
    ['msaId 0', { schemaId: ON_CHAIN, msaId: 0, payload: '0x01', published: PUBLISHED }, /^body\.msaId: /],
    ['msaId 1.5', { schemaId: ON_CHAIN, msaId: 1.5, payload: '0x01', published: PUBLISHED }, /^body\.msaId: /],
    [
      'an msaId beyond what a JSON number holds exactly',
      { schemaId: ON_CHAIN, msaId: 2 ** 53, payload: '0x01', published: PUBLISHED },
      /^body\.msaId: must be a positive integer, at most 9007199254740991 as a JSON number \(send larger ids as text\)$/,
    ],
    [
      'an msaId beyond u64',
      { schemaId: ON_CHAIN, msaId: '18446744073709551616', payload: '0x01', published: PUBLISHED },
      /^body\.msaId: must be below 2\^64$/,
    ],
  ])('400 for %s', async (_name, body, expected) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toEqual([expect.stringMatching(expected)]);
  });

  it('v2 answers 410 whatever the body', async () => {
    for (const body of [{ schemaId: ON_CHAIN, payload: '0x01', published: PUBLISHED }, {}]) {
      const answer = await post(body, '/v2/content/2/on-chain');
      expect(answer.status).toBe(410);
      expect(answer.body.message).toMatch(/use POST \/v3\/content\/on-chain/);
    }
  });
});
