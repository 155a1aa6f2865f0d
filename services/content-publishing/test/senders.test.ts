import { ChainQueries } from '@frequency-gateway/chain';
import { parseExtraGenesis } from '@frequency-gateway/devchain';
import { callJson } from '@frequency-gateway/devstack';
import { grantIntents } from './support/chainSetup.js';
import { startApiStack, type ApiStack } from './support/stack.js';

const PUBLISHED = '2024-05-01T12:00:00Z';
const note = { content: { content: 'hello', published: PUBLISHED } };
const reaction = {
  emoji: '👍',
  apply: 1,
  inReplyTo: 'dsnp://2/bdyqdua4t4pxgy37mdmjyqv3dejp5betyqsznimpneyujsur23yubzna',
};

// Content is refused at the edge, naming msaId, when the provider may not publish it for its user: the MSA does not
// exist (400), or its user has not delegated the content's intent to the provider (401).
describe('who content may be published for', () => {
  let stack: ApiStack;
  let broadcastIntent: number;
  let reactionIntent: number;
  const post = (path: string, body: unknown, method = 'POST') => callJson(stack.url, method, path, body);

  beforeAll(async () => {
    stack = await startApiStack(
      {},
      {
        genesis: await parseExtraGenesis({
          users: [
            { account: '//Dave' },
            { account: '//Eve', delegations: [{ provider: 1, intents: ['dsnp.broadcast'] }] },
          ],
        }),
      },
    );
    const queries = new ChainQueries(stack.chain.api);
    broadcastIntent = (await queries.intentByName('dsnp.broadcast'))!.intentId;
    reactionIntent = (await queries.intentByName('dsnp.reaction'))!.intentId;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('accepts content from a user who delegated its intent, and from the provider itself', async () => {
    expect((await post('/v1/content/3/broadcast', note)).status).toBe(202);
    expect((await post('/v1/content/1/broadcast', note)).status).toBe(202);
    expect((await post('/v1/content/1/reaction', reaction)).status).toBe(202);
  });

  it('400 naming msaId when the MSA does not exist, for every content route', async () => {
    const routes: [string, string, unknown][] = [
      ['POST', '/v1/content/99/broadcast', note],
      ['POST', '/v1/content/99/reaction', reaction],
      ['PUT', '/v1/profile/99', { profile: { name: 'nobody' } }],
    ];
    for (const [method, path, body] of routes) {
      const answer = await post(path, body, method);
      expect({ path, status: answer.status, body: answer.body }).toMatchObject({
        path,
        status: 400,
        body: { message: 'params.msaId: MSA 99 does not exist' },
      });
    }
  });

  it("401 naming msaId and the intent when the user has not delegated the content's intent to the provider", async () => {
    const dave = await post('/v1/content/2/broadcast', note);
    expect(dave.status).toBe(401);
    expect(dave.body.message).toBe(
      `params.msaId: user 2 has not delegated intent ${broadcastIntent} (dsnp.broadcast) to provider 1`,
    );
    const eve = await post('/v1/content/3/reaction', reaction);
    expect(eve.status).toBe(401);
    expect(eve.body.message).toBe(
      `params.msaId: user 3 has not delegated intent ${reactionIntent} (dsnp.reaction) to provider 1`,
    );
  });

  it('a refusal is not remembered: once the user delegates, the next request is accepted', async () => {
    expect((await post('/v1/content/2/reaction', reaction)).status).toBe(401);
    await grantIntents(stack.chain.api, '//Dave', [reactionIntent]);
    expect((await post('/v1/content/2/reaction', reaction)).status).toBe(202);
  });

  it('503 while the chain cannot be reached for a user not yet seen; nothing is accepted', async () => {
    await stack.devchain.close();
    const answer = await post('/v1/content/4/broadcast', note);
    expect(answer.status).toBe(503);
    expect(answer.body.message).toMatch(/chain/i);
  });
});
