// The user stories of the whole gateway, against the six components in containers of the gateway image (default)
// or as local processes (E2E_STACK=local): one line per journey, starting with `e2e journey`. The journeys after the
// sign-ups use the members they made, in order: sign-up (sr25519), sign-up (Ethereum), login of both, content,
// handle change, key add; then a further user (no handle) revokes the delegation and retires.
import { randomBytes } from 'node:crypto';
import { SignedPayloads } from '@frequency-gateway/chain';
import { callJson, waitUntil } from '@frequency-gateway/devstack';
import { SiwfUser, type KeyKind } from '@frequency-gateway/devstack/siwf';
import { verifyWebhook } from '@frequency-gateway/webhooks';
import { cryptoWaitReady } from '@polkadot/util-crypto';
import { LOGIN_URI, type GatewayClient } from '../src/clients/gatewayClient.js';
import {
  ACCOUNT_WEBHOOKS,
  CONTENT_WEBHOOKS,
  startGatewayUnderTest,
  type GatewayUnderTest,
} from '../src/journeys/gatewayUnderTest.js';
import type { Delivery } from '../src/clients/receiver.js';

/** Where the content watcher delivers announcements (registered in beforeAll). */
const WATCHER_PATH = '/watcher/announcements';
const ALL_TYPES = ['broadcast', 'reply', 'reaction', 'update', 'tombstone', 'profile'];
const INTENTS = ['dsnp.broadcast', 'dsnp.reply', 'dsnp.reaction', 'dsnp.update', 'dsnp.tombstone', 'dsnp.profile'];

let gateway: GatewayUnderTest | undefined;
let client: GatewayClient | undefined;
type Member = { user: SiwfUser; msaId: string; handle: string };
/** The sr25519 member: the one the content, handle and key journeys use. */
let member: Member | undefined;
/** The member with an Ethereum (secp256k1) key. */
let ethereumMember: Member | undefined;

const say = (line: string) => process.stdout.write(`e2e journey (${gateway?.mode}): ${line}\n`);
const seconds = (since: number) => ((Date.now() - since) / 1000).toFixed(1);

beforeAll(async () => {
  await cryptoWaitReady();
  gateway = await startGatewayUnderTest();
  client = await gateway.client();
  const registered = await callJson(gateway.endpoints.contentWatcher, 'POST', '/v1/webhooks', {
    url: gateway.receiver.destination(WATCHER_PATH),
    announcementTypes: ALL_TYPES,
  });
  expect(registered.status).toBe(201);
}, 1_200_000);

afterAll(async () => {
  await client?.close();
  await gateway?.stop();
}, 120_000);

/** The member of the journeys: signed up once (the sign-up journey), reused by the others. */
async function theMember(): Promise<Member> {
  if (!member) throw new Error('the sign-up journey did not make a member');
  return member;
}

/** The watcher's deliveries of one announcement type from the member, matching `which`. */
async function watched(type: number, which: (announcement: Record<string, unknown>) => boolean): Promise<Delivery[]> {
  const { msaId } = await theMember();
  return (await gateway!.receiver.at(WATCHER_PATH)).filter((delivery) => {
    const announcement = delivery.body.announcement as Record<string, unknown> | undefined;
    return announcement?.announcementType === type && announcement.fromId === msaId && which(announcement);
  });
}

/** Waits for the content watcher to deliver one such announcement; it must be signed and come once. */
async function deliveredOnce(
  type: number,
  which: (announcement: Record<string, unknown>) => boolean,
  what: string,
): Promise<Record<string, unknown>> {
  await waitUntil(
    async () => (await watched(type, which)).length > 0,
    120_000,
    `the content watcher delivering ${what}`,
  );
  const found = await watched(type, which);
  expect(found).toHaveLength(1);
  expect(verifyWebhook(gateway!.webhookSecret, found[0]!.headers, found[0]!.raw)).toBe(true);
  return found[0]!.body.announcement as Record<string, unknown>;
}

/** A content request accepted (202), finalized, and notified once to the content-publishing webhook. */
async function published(method: string, path: string, body: unknown): Promise<string> {
  const answer = await callJson(gateway!.endpoints.contentPublishing, method, path, body);
  expect(answer.status).toBe(202);
  const referenceId = answer.body.referenceId as string;
  const [record] = await client!.settled([referenceId], 120_000);
  expect(record!.state).toBe('finalized');
  const notified = await gateway!.receiver.notificationOf(CONTENT_WEBHOOKS, referenceId, gateway!.webhookSecret);
  expect(notified.body).toMatchObject({ referenceId, status: 'SUCCESS', providerId: '1' });
  return referenceId;
}

/**
 * A SIWF sign-up with a key of `kind` and a handle: the SIWF_SIGNUP webhook, then the account found by its key
 * (the SS58 address and the 0x AccountId32; an Ethereum key's is its unified form), by its MSA, and its handle.
 */
async function signedUp(kind: KeyKind): Promise<Member & { line: string }> {
  const started = Date.now();
  const handle = `journey${randomBytes(3).toString('hex')}`;
  const { user, referenceId } = await client!.signUp(handle, INTENTS, kind);
  const webhook = await gateway!.receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, gateway!.webhookSecret);
  expect(webhook.body).toMatchObject({
    transactionType: 'SIWF_SIGNUP',
    status: 'SUCCESS',
    providerId: '1',
    referenceId,
    accountId: user.address,
  });
  const fullHandle = webhook.body.handle as string;
  expect(fullHandle).toMatch(new RegExp(`^${handle}\\.\\d+$`));
  const msaId = String(webhook.body.msaId);
  for (const key of [user.address, user.accountId])
    expect(await callJson(client!.account, 'GET', `/v1/accounts/account/${key}`)).toMatchObject({
      status: 200,
      body: { msaId, handle: { base_handle: handle } },
    });
  expect(await callJson(client!.account, 'GET', `/v1/accounts/${msaId}`)).toMatchObject({
    status: 200,
    body: { msaId },
  });
  expect(await callJson(client!.account, 'GET', `/v1/handles/${msaId}`)).toMatchObject({
    status: 200,
    body: { base_handle: handle },
  });
  return {
    user,
    msaId,
    handle: fullHandle,
    line: `sign-up (${kind}) notified in ${seconds(started)} s, found by key, MSA ${msaId} and handle ${fullHandle}`,
  };
}

test('a SIWF sign-up (sr25519): the SIWF_SIGNUP webhook, then the account found by its key, MSA and handle', async () => {
  const { line, ...made } = await signedUp('sr25519');
  member = made;
  say(line);
}, 300_000);

test('a SIWF sign-up (Ethereum key, EIP-712 signatures): the SIWF_SIGNUP webhook, then the account found by its key, MSA and handle', async () => {
  const { line, ...made } = await signedUp('ethereum');
  expect(made.user.publicKey).toMatchObject({ type: 'Secp256k1', format: 'eip-55' });
  ethereumMember = made;
  say(line);
}, 300_000);

test('a login of both members (sr25519 and Ethereum): their control key and MSA, nothing queued, the handle from the account; the same login again refused', async () => {
  const started = Date.now();
  const members = [await theMember(), ethereumMember];
  for (const signedUpMember of members) {
    if (!signedUpMember) throw new Error('the Ethereum sign-up journey did not make a member');
    const { user, msaId, handle } = signedUpMember;
    const message = await user.login({ uri: LOGIN_URI });
    const answer = await client!.loginWith(message);
    // A registered user: the key and MSA, no sign-up request (nothing goes on chain). The login answer carries no
    // handle (as the sign-in response of the reference gateway): the account look-up by MSA gives it.
    expect(answer).toMatchObject({ status: 200, body: { controlKey: user.address, msaId } });
    expect(answer.body).not.toHaveProperty('signUpReferenceId');
    expect(answer.body).not.toHaveProperty('handle');
    const [base, suffix] = handle.split('.');
    expect(await callJson(client!.account, 'GET', `/v1/accounts/${msaId}`)).toMatchObject({
      status: 200,
      body: { msaId, handle: { base_handle: base, suffix: Number(suffix) } },
    });
    // Each login message is accepted once.
    expect((await client!.loginWith(message)).status).toBe(401);
  }
  say(`login of the sr25519 and the Ethereum member answered their MSA, nothing queued, in ${seconds(started)} s`);
}, 300_000);

test('that user: an image uploaded, a broadcast with it, a reply, a reaction, an update, a tombstone, a profile: each finalized and delivered once by the watcher, the Notes in IPFS as posted', async () => {
  const { msaId } = await theMember();
  const started = Date.now();
  const picture = new Uint8Array(4096).map((_, index) => (index < 4 ? [0x89, 0x50, 0x4e, 0x47][index]! : index % 251));
  const cid = await client!.uploadImage(picture);
  const published_ = new Date().toISOString();
  const note = (content: string, withImage = false) => ({
    content,
    published: published_,
    ...(withImage ? { assets: [{ name: 'picture', references: [{ referenceId: cid, width: 64, height: 64 }] }] } : {}),
  });

  // Broadcast with the image.
  const broadcastNote = note(`a broadcast ${randomBytes(4).toString('hex')}`, true);
  await published('POST', `/v1/content/${msaId}/broadcast`, { content: broadcastNote });
  const broadcast = await deliveredOnce(2, () => true, 'the broadcast');
  const broadcastRead = await client!.noteAt(broadcast.url as string);
  expect(broadcastRead).toMatchObject({ type: 'Note', content: broadcastNote.content, published: published_ });
  expect(JSON.stringify(broadcastRead.attachment)).toContain(cid);
  const stored = new Uint8Array(await (await fetch(`${client!.ipfsGateway}/ipfs/${cid}`)).arrayBuffer());
  expect(Buffer.from(stored).equals(Buffer.from(picture))).toBe(true);
  const target = `dsnp://${msaId}/${broadcast.contentHash as string}`;

  // A reply to it.
  const replyNote = note(`a reply ${randomBytes(4).toString('hex')}`);
  await published('POST', `/v1/content/${msaId}/reply`, { inReplyTo: target, content: replyNote });
  const reply = await deliveredOnce(3, (found) => found.inReplyTo === target, 'the reply');
  expect(await client!.noteAt(reply.url as string)).toMatchObject({ type: 'Note', content: replyNote.content });

  // A reaction to it.
  await published('POST', `/v1/content/${msaId}/reaction`, { emoji: '🎉', apply: 5, inReplyTo: target });
  const reaction = await deliveredOnce(4, (found) => found.inReplyTo === target, 'the reaction');
  expect(reaction).toMatchObject({ emoji: '🎉', apply: 5 });

  // An update of the broadcast.
  const updateNote = note(`an update ${randomBytes(4).toString('hex')}`);
  await published('PUT', `/v1/content/${msaId}`, {
    targetAnnouncementType: 'broadcast',
    targetContentHash: broadcast.contentHash,
    content: updateNote,
  });
  const update = await deliveredOnce(6, (found) => found.targetContentHash === broadcast.contentHash, 'the update');
  expect(await client!.noteAt(update.url as string)).toMatchObject({ type: 'Note', content: updateNote.content });

  // The broadcast retracted.
  await published('POST', `/v2/content/${msaId}/tombstones`, {
    targetAnnouncementType: 'broadcast',
    targetContentHash: broadcast.contentHash,
  });
  await deliveredOnce(0, (found) => found.targetContentHash === broadcast.contentHash, 'the tombstone');

  // A profile (202 without a body: followed through the watcher).
  const summary = `a profile ${randomBytes(4).toString('hex')}`;
  const profile = await callJson(client!.contentPublishing, 'PUT', `/v1/profile/${msaId}`, {
    profile: { summary, published: published_ },
  });
  expect(profile.status).toBe(202);
  const profileAnnouncement = await deliveredOnce(5, () => true, 'the profile');
  expect(await client!.noteAt(profileAnnouncement.url as string)).toMatchObject({ summary });

  say(
    `upload, broadcast, reply, reaction, update, tombstone, profile: each finalized and delivered once in ${seconds(started)} s`,
  );
}, 600_000);

test("a handle change: the CHANGE_HANDLE webhook, then the user's handle is the new one", async () => {
  const { user, msaId } = await theMember();
  const started = Date.now();
  const handle = `moved${randomBytes(3).toString('hex')}`;
  const answer = await client!.handleChange(user, handle);
  expect(answer.status).toBe(200);
  const webhook = await gateway!.receiver.notificationOf(
    ACCOUNT_WEBHOOKS,
    answer.body.referenceId as string,
    gateway!.webhookSecret,
  );
  expect(webhook.body).toMatchObject({ transactionType: 'CHANGE_HANDLE', status: 'SUCCESS', msaId });
  expect((await callJson(client!.account, 'GET', `/v1/handles/${msaId}`)).body.base_handle).toBe(handle);
  say(`handle changed to ${webhook.body.handle as string} in ${seconds(started)} s`);
}, 300_000);

test('a key added: both keys sign AddKeyData, the ADD_KEY webhook, then the MSA lists both keys', async () => {
  const { user, msaId } = await theMember();
  const started = Date.now();
  const api = client!.chain.api;
  const newKey = SiwfUser.create('sr25519');
  const payload = {
    msaId: BigInt(msaId),
    expiration: new SignedPayloads(api).expiration('msa', await client!.finalizedBlock()),
    newPublicKey: newKey.accountId,
  };
  const answer = await callJson(client!.account, 'POST', '/v1/keys/add', {
    msaOwnerAddress: user.address,
    msaOwnerSignature: await user.addKeyProof(api, payload),
    newKeyOwnerSignature: await newKey.addKeyProof(api, payload),
    payload: { ...payload, msaId },
  });
  expect(answer.status).toBe(200);
  const webhook = await gateway!.receiver.notificationOf(
    ACCOUNT_WEBHOOKS,
    answer.body.referenceId as string,
    gateway!.webhookSecret,
  );
  expect(webhook.body).toMatchObject({
    transactionType: 'ADD_KEY',
    status: 'SUCCESS',
    msaId,
    newPublicKey: newKey.address,
  });
  const keys = await callJson(client!.account, 'GET', `/v1/keys/${msaId}`);
  expect((keys.body.msaKeys as string[]).sort()).toEqual([user.address, newKey.address].sort());
  say(`key added to MSA ${msaId} in ${seconds(started)} s`);
}, 300_000);

test('a user without a handle revokes the delegation, then retires: REVOKE_DELEGATION and RETIRE_MSA webhooks, the account gone', async () => {
  const started = Date.now();
  const { user, referenceId } = await client!.signUp(undefined);
  const signedUp = await gateway!.receiver.notificationOf(ACCOUNT_WEBHOOKS, referenceId, gateway!.webhookSecret);
  const msaId = String(signedUp.body.msaId);
  /** The unsigned transaction the account api offers, signed by the user as a wallet would, then posted. */
  const signedAndPosted = async (offer: string, post: string) => {
    const offered = await callJson(client!.account, 'GET', offer);
    expect(offered.status).toBe(200);
    const payloadToSign = offered.body.payloadToSign as `0x${string}`;
    const answer = await callJson(client!.account, 'POST', post, {
      ...offered.body,
      signature: user.signTransactionPayload(payloadToSign),
    });
    expect(answer.status).toBe(201);
    return gateway!.receiver.notificationOf(
      ACCOUNT_WEBHOOKS,
      answer.body.referenceId as string,
      gateway!.webhookSecret,
    );
  };
  const revoked = await signedAndPosted(
    `/v3/delegations/revokeDelegation/${user.address}/1`,
    '/v3/delegations/revokeDelegation',
  );
  expect(revoked.body).toMatchObject({
    transactionType: 'REVOKE_DELEGATION',
    status: 'SUCCESS',
    msaId,
    providerId: '1',
  });
  const delegation = await callJson(client!.account, 'GET', `/v3/delegations/${msaId}/1`);
  expect((delegation.body.delegations as { revokedAtBlock: number }[])[0]!.revokedAtBlock).toBe(
    revoked.body.blockNumber,
  );
  const retired = await signedAndPosted(`/v1/accounts/retireMsa/${user.address}`, '/v1/accounts/retireMsa');
  expect(retired.body).toMatchObject({ transactionType: 'RETIRE_MSA', status: 'SUCCESS', msaId });
  expect((await callJson(client!.account, 'GET', `/v1/accounts/account/${user.address}`)).status).toBe(404);
  say(`MSA ${msaId}: delegation revoked and MSA retired in ${seconds(started)} s`);
}, 300_000);
