import { ChainQueries, loadProviderKey } from '@frequency-gateway/chain';
import { AnnouncementType, writeBatch, parseParquetModel } from '@frequency-gateway/dsnp';
import {
  callJson,
  dsnpUsers,
  jsonAnswerOf,
  startWebhookReceiver,
  type WebhookReceiver,
} from '@frequency-gateway/devstack';
import { dsnpHash } from '@frequency-gateway/storage';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { createOnChainIntent, FIRST_NEW_ID, grantIntents } from './support/chainSetup.js';
import { batchRows, fromGateway, messagesOf, startPipeline, type PipelineStack } from './support/pipeline.js';
import { form, png, TEST_USERS } from './support/stack.js';

const PUBLISHED = '2026-11-21T10:00:00.000Z';
const SECRET = 'pipeline-webhook-secret-0123456789';

describe('publishing pipeline: api, worker, devchain, Redis and Kubo as separate processes', () => {
  let stack: PipelineStack;
  let receiver: WebhookReceiver;
  let queries: ChainQueries;
  let dave: string;

  const intentOf = async (name: string) => (await queries.intentByName(name))!;
  /** The announcement row of a finalized request, read back from the chain and the batch file in IPFS. */
  const rowOf = async (referenceId: string, intentName: string) => {
    const record = (await stack.request(referenceId))!;
    expect(record.state).toBe('finalized');
    const intent = await intentOf(intentName);
    const messages = await messagesOf(stack.chain, intent.intentId, record.block!.number, record.block!.number + 1);
    const message = messages.find((candidate) => candidate.cid === record.batch!.cid);
    expect(message).toMatchObject({ schemaId: intent.latestSchemaId, providerMsaId: '1' });
    const file = await fromGateway(`${stack.kubo.gatewayUrl}/ipfs/${record.batch!.cid}`);
    // The message announces the file's length, not its DAG size.
    expect(message!.payloadLength).toBe(file.length);
    const rows = await batchRows(stack.kubo, record.batch!.cid);
    return { record, rows };
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    stack = await startPipeline({
      workerEnv: { WEBHOOK_BASE_URL: receiver.url, WEBHOOK_SECRET: SECRET, BATCH_MAX_COUNT: '100' },
      genesis: { users: [...dsnpUsers(TEST_USERS).users, { account: '//Dave' }] },
    });
    queries = new ChainQueries(stack.chain.api);
    await createOnChainIntent(stack.chain.api, 'test.pipeline');
    await grantIntents(stack.chain.api, '//Dave', [FIRST_NEW_ID]);
    dave = (await queries.msaIdOf((await loadProviderKey('//Dave')).address))!.toString();
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  it('publishes every kind of announcement, with correct ActivityContent, and notifies each outcome', async () => {
    const image = png(4000, 7);
    const upload = await jsonAnswerOf(
      await fetch(`${stack.api.url}/v2/asset/upload`, {
        method: 'POST',
        body: form([{ name: 'photo.png', type: 'image/png', bytes: image }]),
      }),
    );
    const imageCid = upload.body.files[0].cid as string;
    const target = `dsnp://2/${dsnpHash(new TextEncoder().encode('earlier'))}`;
    const post = async (path: string, body: unknown, method = 'POST') => {
      const answer = await callJson(stack.api.url, method, path, body);
      expect(answer.status).toBe(202);
      return (answer.body?.referenceId ?? answer.headers.get('location')?.split('/').pop()) as string;
    };
    const note = (content: string, extra: object = {}) => ({ content, published: PUBLISHED, ...extra });
    const ids = {
      broadcast: await post('/v1/content/2/broadcast', {
        content: note('with a picture', {
          assets: [{ name: 'photo', references: [{ referenceId: imageCid, width: 40, height: 30 }] }],
          tag: [{ type: 'hashtag', name: 'gateway' }],
        }),
      }),
      reply: await post('/v1/content/3/reply', { inReplyTo: target, content: note('a reply') }),
      reaction: await post('/v1/content/4/reaction', { emoji: '🤌🏼', apply: 5, inReplyTo: target }),
      update: await post(
        '/v1/content/2',
        { targetAnnouncementType: 'broadcast', targetContentHash: target.split('/')[3], content: note('edited') },
        'PUT',
      ),
      tombstone: await post('/v2/content/2/tombstones', {
        targetAnnouncementType: 'reply',
        targetContentHash: target.split('/')[3],
      }),
      profile: await post('/v1/profile/5', { profile: { name: 'Five', summary: 'about five' } }, 'PUT'),
    };
    const records = await stack.settled(Object.values(ids), 90_000);
    expect(records.map((record) => [record.kind, record.state])).toEqual(
      Object.keys(ids).map((kind) => [kind, 'finalized']),
    );
    // Every step was recorded, in order.
    expect(records[0]!.history.map((step) => step.state)).toEqual([
      'queued',
      'processing',
      'batched',
      'submitted',
      'finalized',
    ]);

    const broadcast = await rowOf(ids.broadcast, 'dsnp.broadcast');
    const row = broadcast.rows.find((candidate) => candidate.contentHash !== undefined && candidate.fromId === 2n)!;
    expect(row).toMatchObject({ announcementType: AnnouncementType.Broadcast, fromId: 2n });
    const document = await fromGateway(row.url as string);
    expect(dsnpHash(document)).toBe(row.contentHash);
    const activity = JSON.parse(document.toString('utf8'));
    expect(activity).toMatchObject({
      '@context': 'https://www.w3.org/ns/activitystreams',
      type: 'Note',
      mediaType: 'text/plain',
      content: 'with a picture',
      published: PUBLISHED,
      tag: [{ name: 'gateway' }],
    });
    expect(activity.attachment).toHaveLength(1);
    expect(activity.attachment[0]).toEqual({
      type: 'Image',
      name: 'photo',
      url: [
        {
          type: 'Link',
          href: `${stack.kubo.gatewayUrl}/ipfs/${imageCid}`,
          mediaType: 'image/png',
          hash: [dsnpHash(image)],
          width: 40,
          height: 30,
        },
      ],
    });
    // The attachment's URL serves the uploaded bytes.
    expect(Buffer.compare(await fromGateway(activity.attachment[0].url[0].href), Buffer.from(image))).toBe(0);

    const reply = (await rowOf(ids.reply, 'dsnp.reply')).rows.find((candidate) => candidate.fromId === 3n)!;
    expect(reply).toMatchObject({ announcementType: AnnouncementType.Reply, inReplyTo: target });
    expect(JSON.parse((await fromGateway(reply.url as string)).toString()).content).toBe('a reply');
    const reaction = (await rowOf(ids.reaction, 'dsnp.reaction')).rows.find((candidate) => candidate.fromId === 4n);
    expect(reaction).toMatchObject({
      announcementType: AnnouncementType.Reaction,
      emoji: '🤌🏼',
      apply: 5,
      inReplyTo: target,
    });
    const update = (await rowOf(ids.update, 'dsnp.update')).rows.find((candidate) => candidate.fromId === 2n);
    expect(update).toMatchObject({
      announcementType: AnnouncementType.Update,
      targetAnnouncementType: AnnouncementType.Broadcast,
      targetContentHash: target.split('/')[3],
    });
    const tombstone = (await rowOf(ids.tombstone, 'dsnp.tombstone')).rows.find((candidate) => candidate.fromId === 2n);
    expect(tombstone).toMatchObject({
      announcementType: AnnouncementType.Tombstone,
      targetAnnouncementType: AnnouncementType.Reply,
    });
    const profile = (await rowOf(ids.profile, 'dsnp.profile')).rows.find((candidate) => candidate.fromId === 5n)!;
    expect(JSON.parse((await fromGateway(profile.url as string)).toString())).toMatchObject({
      type: 'Profile',
      name: 'Five',
      summary: 'about five',
    });

    // One signed SUCCESS webhook per request.
    const webhooks = await receiver.waitFor(6, 30_000);
    const bodies = webhooks.map((webhook) => webhook.body as { referenceId: string; status: string });
    expect(new Set(bodies.map((body) => body.referenceId))).toEqual(new Set(Object.values(ids)));
    expect(bodies.every((body) => body.status === 'SUCCESS')).toBe(true);
    for (const webhook of webhooks) {
      expect(webhook.path).toBe('/webhooks/transaction-notify');
      expect(verifyWebhook(SECRET, webhook.headers, webhook.raw)).toBe(true);
    }
    const first = bodies.find((body) => body.referenceId === ids.broadcast);
    expect(first).toMatchObject({
      transactionType: 'CAPACITY_BATCH',
      providerId: '1',
      txHash: records[0]!.transaction!.hash,
      blockHash: records[0]!.block!.hash,
      blockNumber: records[0]!.block!.number,
    });
  }, 150_000);

  it('announces v2 and v3 batch files as they are, under their schema', async () => {
    const broadcast = await intentOf('dsnp.broadcast');
    const schema = (await queries.schema(broadcast.latestSchemaId!))!;
    const file = await writeBatch(parseParquetModel(schema.model), [
      { announcementType: 2, fromId: 9n, contentHash: dsnpHash(new Uint8Array([1])), url: 'https://example.org/1' },
    ]);
    const parquet = { name: 'batch.parquet', type: 'application/vnd.apache.parquet', bytes: file };
    const uploaded = await jsonAnswerOf(
      await fetch(`${stack.api.url}/v2/asset/upload`, { method: 'POST', body: form([parquet]) }),
    );
    const cid = uploaded.body.files[0].cid as string;
    const v2 = await callJson(stack.api.url, 'POST', '/v2/content/batchAnnouncement', {
      batchFiles: [{ cid, schemaId: schema.schemaId }],
    });
    expect(v2.status).toBe(202);
    const other = await writeBatch(parseParquetModel(schema.model), [
      { announcementType: 2, fromId: 10n, contentHash: dsnpHash(new Uint8Array([2])), url: 'https://example.org/2' },
    ]);
    const v3 = await jsonAnswerOf(
      await fetch(`${stack.api.url}/v3/content/batchAnnouncement`, {
        method: 'POST',
        body: form([{ ...parquet, bytes: other }], [['schemaId', String(schema.schemaId)]]),
      }),
    );
    expect(v3.status).toBe(200);
    const ids = [v2.body.referenceId as string, v3.body.files[0].referenceId as string];
    const records = await stack.settled(ids, 60_000);
    expect(records.map((record) => record.state)).toEqual(['finalized', 'finalized']);
    for (const [index, record] of records.entries()) {
      const messages = await messagesOf(
        stack.chain,
        broadcast.intentId,
        record.block!.number,
        record.block!.number + 1,
      );
      const expected = index === 0 ? cid : (v3.body.files[0].cid as string);
      const message = messages.find((candidate) => candidate.cid === expected);
      expect(message).toMatchObject({ schemaId: schema.schemaId, payloadLength: (index === 0 ? file : other).length });
    }
  }, 90_000);

  it('publishes v3 on-chain content for a delegated user, readable from the chain', async () => {
    const before = receiver.received.length;
    const answer = await callJson(stack.api.url, 'POST', '/v3/content/on-chain', {
      intentName: 'test.pipeline',
      payload: '0x0c',
      published: PUBLISHED,
      msaId: dave,
    });
    expect(answer.status).toBe(202);
    const [record] = await stack.settled([answer.body.referenceId], 60_000);
    expect(record!.state).toBe('finalized');
    const messages = await messagesOf(stack.chain, FIRST_NEW_ID, record!.block!.number, record!.block!.number + 1);
    expect(messages).toEqual([expect.objectContaining({ payload: '0x0c', msaId: dave, providerMsaId: '1' })]);
    const webhook = (await receiver.waitFor(before + 1, 30_000)).find(
      (candidate) => (candidate.body as { referenceId: string }).referenceId === answer.body.referenceId,
    );
    expect(webhook?.body).toMatchObject({
      transactionType: 'ON_CHAIN_CONTENT',
      status: 'SUCCESS',
      msaId: dave,
      intentId: FIRST_NEW_ID,
      schemaId: FIRST_NEW_ID,
    });
  }, 90_000);
});
