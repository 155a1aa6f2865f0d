import {
  ChainQueries,
  connectChain,
  DEV_CHAIN_ID,
  MAINNET_CHAIN_ID,
  ethereumAccountId,
  SignedPayloads,
  type ChainConnection,
  type Eip712Payload,
  type UserSignature,
} from '@frequency-gateway/chain';
import { createRandomKey, createRecoveryCommitmentPayload, sign } from '@frequency-chain/ethereum-utils';
import { startDevchain, type Devchain } from '@frequency-gateway/devchain';
import { Keyring } from '@polkadot/keyring';
import type { ApiPromise } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { Codec } from '@polkadot/types/types';
import { hexToU8a, u8aToHex } from '@polkadot/util';
import { cryptoWaitReady, decodeAddress } from '@polkadot/util-crypto';
import {
  getLoginResult,
  validateSiwfResponse,
  type SiwfResponse,
  type SiwfResponsePayload,
  type SiwfResponsePayloadAddProvider,
  type SiwfResponsePayloadClaimHandle,
  type SiwfResponsePayloadItemActions,
} from '@projectlibertylabs/siwf';
import { startSiwfServer, type SiwfServer } from './support/siwfServer.js';
import { submitAsAlice } from './support/submit.js';
import { encodeAuthorizationPayload, SiwfUser, tamper, type KeyKind } from '@frequency-gateway/devstack/siwf';

/** MSA 1: //Alice, the provider the devchain's genesis registers and stakes for. */
const PROVIDER_ID = 1;
const KINDS: KeyKind[] = ['sr25519', 'ethereum'];
const ALGO = { SR25519: 'Sr25519', SECP256K1: 'Ecdsa' } as const;

let devchain: Devchain;
let chain: ChainConnection;
let api: ApiPromise;
let intentIds: number[];
let graphKeySchemaId: number;

beforeAll(async () => {
  await cryptoWaitReady();
  devchain = await startDevchain({ sealing: 'instant' });
  chain = await connectChain({ url: devchain.url });
  api = chain.api;
  const queries = new ChainQueries(api);
  const graphKey = await queries.intentByName('dsnp.public-key-key-agreement');
  const broadcast = await queries.intentByName('dsnp.broadcast');
  if (graphKey?.latestSchemaId === undefined || !broadcast) throw new Error('the devchain lacks the DSNP intents');
  graphKeySchemaId = graphKey.latestSchemaId;
  intentIds = [broadcast.intentId, graphKey.intentId].sort((a, b) => a - b);
}, 60_000);

afterAll(async () => {
  await chain?.close();
  await devchain?.close();
});

/** An expiration every payload window accepts: half the smallest window past the finalized head. */
async function expiration(): Promise<number> {
  const payloads = new SignedPayloads(api);
  const finalized = (await api.rpc.chain.getHeader(await api.rpc.chain.getFinalizedHead())).number.toNumber();
  const smallest = Math.min(...(['msa', 'handles', 'statefulStorage'] as const).map((w) => payloads.windowOf(w)));
  return finalized + Math.floor(smallest / 2);
}

/** A DSNP graph public key item: the Avro record {publicKey: bytes} of a 32-byte X25519 key. */
const graphKeyItem = (): `0x${string}` =>
  u8aToHex(new Uint8Array([0x40, ...crypto.getRandomValues(new Uint8Array(32))]));

async function signUp(user: SiwfUser, handle = 'siwfuser'): Promise<SiwfResponse> {
  return user.signUp(api, {
    providerId: PROVIDER_ID,
    intentIds,
    expiration: await expiration(),
    handle,
    itemActions: { schemaId: graphKeySchemaId, targetHash: 0, items: [graphKeyItem()] },
  });
}

/** The chain's codec of a response payload and its EIP-712 type name. */
function chainPayload(payload: SiwfResponsePayload): { codec: Codec; kind: Eip712Payload } {
  const codecs = new SignedPayloads(api);
  switch (payload.type) {
    case 'addProvider':
      return { codec: codecs.addProvider((payload as SiwfResponsePayloadAddProvider).payload), kind: 'AddProvider' };
    case 'claimHandle':
      return {
        codec: codecs.claimHandle((payload as SiwfResponsePayloadClaimHandle).payload),
        kind: 'ClaimHandlePayload',
      };
    case 'itemActions': {
      const { actions, ...rest } = (payload as SiwfResponsePayloadItemActions).payload;
      const codec = codecs.itemizedV2({
        ...rest,
        actions: actions.map((action) => ({ Add: { data: action.payloadHex as `0x${string}` } })),
      });
      return { codec, kind: 'ItemizedSignaturePayloadV2' };
    }
    default:
      throw new Error(`not a chain payload: ${payload.type}`);
  }
}

const signatureOf = (payload: SiwfResponsePayload): UserSignature => ({
  algo: ALGO[payload.signature.algo],
  encodedValue: payload.signature.encodedValue,
});

/** The AccountId32 a consumer derives from `userPublicKey` (SS58, or an EIP-55 address in its unified form). */
function accountOf(response: SiwfResponse): `0x${string}` {
  const key = response.userPublicKey;
  if (key.type === 'Sr25519') return u8aToHex(decodeAddress(key.encodedValue));
  return u8aToHex(ethereumAccountId(hexToU8a(key.encodedValue)));
}

/** The calls a provider submits for the chain payloads of a response, in response order. */
function callsOf(response: SiwfResponse): SubmittableExtrinsic<'promise'>[] {
  const account = accountOf(response);
  return response.payloads
    .filter((payload) => payload.endpoint)
    .map((payload) => {
      const value = payload.signature.encodedValue;
      const proof = payload.signature.algo === 'SR25519' ? { Sr25519: value } : { Ecdsa: value };
      const { codec } = chainPayload(payload);
      switch (payload.type) {
        case 'addProvider':
          return api.tx.msa.createSponsoredAccountWithDelegation(account, proof, codec as never);
        case 'claimHandle':
          return api.tx.handles.claimHandle(account, proof, codec as never);
        case 'itemActions':
          return api.tx.statefulStorage.applyItemActionsWithSignatureV2(account, proof, codec as never);
        default:
          throw new Error(`no call for ${payload.type}`);
      }
    });
}

describe.each(KINDS)('SiwfUser (%s)', (kind) => {
  it('has one identity across accountId, address and userPublicKey', () => {
    const user = SiwfUser.create(kind);
    expect(user.accountId).toMatch(/^0x[0-9a-f]{64}$/);
    expect(u8aToHex(decodeAddress(user.address))).toBe(user.accountId);
    if (kind === 'ethereum') {
      expect(user.accountId.endsWith('ee'.repeat(12))).toBe(true);
      expect(user.publicKey).toMatchObject({ encoding: 'base16', format: 'eip-55', type: 'Secp256k1' });
      expect(user.publicKey.encodedValue).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(user.publicKey.encodedValue.toLowerCase()).toBe(user.accountId.slice(0, 42));
    } else {
      expect(user.publicKey).toEqual({
        encodedValue: user.address,
        encoding: 'base58',
        format: 'ss58',
        type: 'Sr25519',
      });
    }
    expect(accountOf({ userPublicKey: user.publicKey, payloads: [] })).toBe(user.accountId);
  });

  it('is deterministic for a seed', () => {
    const seed = kind === 'sr25519' ? '//Dave' : '0x5fb92d6e98884f76de468fa3f6278f8807c48bebc13595d45af5bdc4da702133';
    expect(SiwfUser.create(kind, seed).accountId).toBe(SiwfUser.create(kind, seed).accountId);
    expect(SiwfUser.create(kind).accountId).not.toBe(SiwfUser.create(kind).accountId);
  });

  it('signs every chain payload of a sign-up as the chain verifies it, and a tampered signature fails', async () => {
    const user = SiwfUser.create(kind);
    const response = await signUp(user);
    expect(response.payloads.map((payload) => payload.type)).toEqual([
      'addProvider',
      'itemActions',
      'claimHandle',
      'login',
    ]);
    for (const [index, payload] of response.payloads.entries()) {
      if (!payload.endpoint) continue;
      const { codec, kind: payloadKind } = chainPayload(payload);
      expect(SignedPayloads.verify(user.accountId, signatureOf(payload), codec, payloadKind)).toBe(true);
      const tampered = tamper(response, index).payloads[index] as SiwfResponsePayload;
      expect(tampered.signature.encodedValue).not.toBe(payload.signature.encodedValue);
      expect(SignedPayloads.verify(user.accountId, signatureOf(tampered), codec, payloadKind)).toBe(false);
      // Another user's key does not verify either.
      expect(SignedPayloads.verify(SiwfUser.create(kind).accountId, signatureOf(payload), codec, payloadKind)).toBe(
        false,
      );
    }
  });

  it('leaves out the parts a sign-up does not ask for', async () => {
    const user = SiwfUser.create(kind);
    const response = await user.signUp(api, {
      providerId: PROVIDER_ID,
      intentIds,
      expiration: await expiration(),
      login: false,
    });
    expect(response.payloads.map((payload) => payload.type)).toEqual(['addProvider']);
    expect(response.payloads[0]?.payload).toEqual({
      authorizedMsaId: PROVIDER_ID,
      intentIds,
      expiration: expect.any(Number),
    });
  });

  it('writes a login the siwf library accepts for its URI only', async () => {
    const user = SiwfUser.create(kind);
    const response = await user.login();
    const [login] = response.payloads;
    expect(login?.type).toBe('login');
    expect(response.userPublicKey).toEqual(user.publicKey);
    const message = (login?.payload as { message: string }).message.split('\n');
    expect(message[0]).toBe('localhost wants you to sign in with your Frequency account:');
    expect(message[1]).toBe(`frequency:dev:${user.publicKey.encodedValue}`);
    expect(message.slice(2, 5)).toEqual(['', 'URI: https://localhost/login', 'Version: 1']);

    await expect(validateSiwfResponse(response, { chainType: 'Dev', loginMsgUri: 'localhost' })).resolves.toEqual(
      response,
    );
    await expect(validateSiwfResponse(response, { chainType: 'Dev', loginMsgUri: 'example.com' })).rejects.toThrow(
      /does not match/,
    );
    // The encoded form the gateway's API receives decodes to the same response.
    await expect(
      validateSiwfResponse(encodeAuthorizationPayload(response), { chainType: 'Dev', loginMsgUri: 'localhost' }),
    ).resolves.toEqual(response);
  });

  it('has the login of a sign-up accepted, and a tampered or expired login refused', async () => {
    const user = SiwfUser.create(kind);
    const response = await signUp(user);
    const index = response.payloads.findIndex((payload) => payload.type === 'login');
    const login = (payloads: SiwfResponsePayload[]) => ({ userPublicKey: response.userPublicKey, payloads });
    const options = { chainType: 'Dev', loginMsgUri: 'localhost' } as const;
    await expect(validateSiwfResponse(login([response.payloads[index]!]), options)).resolves.toBeDefined();
    await expect(validateSiwfResponse(login([tamper(response, index).payloads[index]!]), options)).rejects.toThrow(
      /signature failed/,
    );
    const expired = await user.login({
      issuedAt: new Date(Date.now() - 600_000),
      expirationTime: new Date(Date.now() - 1),
    });
    await expect(validateSiwfResponse(expired, options)).rejects.toThrow(/expired/);
    const open = await user.login({ expirationTime: null });
    expect((open.payloads[0]?.payload as { message: string }).message).not.toContain('Expiration Time');
    await expect(validateSiwfResponse(open, options)).resolves.toBeDefined();
  });

  it('signs a user up on chain through the provider', async () => {
    const user = SiwfUser.create(kind);
    const handle = kind === 'sr25519' ? 'siwfsr' : 'siwfeth';
    const response = await signUp(user, handle);
    const item = (response.payloads.find((p) => p.type === 'itemActions') as SiwfResponsePayloadItemActions).payload
      .actions[0]?.payloadHex;

    const events = await submitAsAlice(api.tx.frequencyTxPayment.payWithCapacityBatchAll(callsOf(response)));
    expect(events).toEqual(
      expect.arrayContaining([
        'msa.MsaCreated',
        'msa.DelegationGranted',
        'handles.HandleClaimed',
        'statefulStorage.ItemizedPageUpdated',
        'system.ExtrinsicSuccess',
      ]),
    );
    expect(events).not.toContain('system.ExtrinsicFailed');

    const queries = new ChainQueries(api);
    const msaId = await queries.msaIdOf(user.accountId);
    expect(msaId).toBeDefined();
    expect((await queries.handleOf(msaId as bigint))?.base).toBe(handle);
    const delegation = await queries.delegation(msaId as bigint, PROVIDER_ID);
    expect(delegation?.grants.map((grant) => grant.intentId).sort((a, b) => a - b)).toEqual(intentIds);
    const intentId = (await queries.intentByName('dsnp.public-key-key-agreement'))?.intentId as number;
    const page = await api.rpc.statefulStorage.getItemizedStorage(msaId as bigint, intentId);
    expect(page.items.map((entry: { payload: Codec }) => entry.payload.toHex())).toEqual([item]);
  });

  it('is refused on chain when a payload is tampered with', async () => {
    const user = SiwfUser.create(kind);
    const response = await signUp(user, 'siwftampered');
    const index = response.payloads.findIndex((payload) => payload.type === 'claimHandle');
    const events = await submitAsAlice(
      api.tx.frequencyTxPayment.payWithCapacityBatchAll(callsOf(tamper(response, index))),
    );
    expect(events).toContain('system.ExtrinsicFailed');
    expect(events).not.toContain('msa.MsaCreated');
    expect(await new ChainQueries(api).msaIdOf(user.accountId)).toBeUndefined();
  });
});

describe('startSiwfServer', () => {
  let server: SiwfServer;
  beforeAll(async () => {
    server = await startSiwfServer();
  });
  afterAll(async () => server?.stop());

  it('exchanges an authorization code for its response, as the siwf library fetches it', async () => {
    const response = await SiwfUser.create('sr25519').login();
    const code = server.issue(response);
    expect(code).not.toBe(server.issue(response));
    const options = { endpoint: server.url, chainType: 'Dev', loginMsgUri: 'localhost' } as const;
    await expect(getLoginResult(code, options)).resolves.toEqual(response);
    expect(server.fetches(code)).toBe(1);
    await expect(getLoginResult('unknown', options)).rejects.toThrow(/404/);
    expect((await fetch(`${server.url}/other?authorizationCode=${code}`)).status).toBe(404);
  });
});

describe('recovery commitments (a payload the devchain does not dispatch, checked by signature only)', () => {
  const commitment = u8aToHex(crypto.getRandomValues(new Uint8Array(32)));

  test('an sr25519 signature over the wrapped SCALE payload verifies; another commitment does not', async () => {
    const pair = new Keyring({ type: 'sr25519' }).addFromUri(`//recovery${Math.random()}`);
    const payloads = new SignedPayloads(api);
    const payload = payloads.recoveryCommitment({ recoveryCommitment: commitment, expiration: 100 });
    const signature = u8aToHex(pair.sign(hexToU8a(SignedPayloads.signingBytes(payload).wrapped)));
    const signer = u8aToHex(pair.publicKey);
    const proof: UserSignature = { algo: 'Sr25519', encodedValue: signature };
    expect(SignedPayloads.verify(signer, proof, payload, 'RecoveryCommitmentPayload')).toBe(true);
    const other = payloads.recoveryCommitment({ recoveryCommitment: u8aToHex(new Uint8Array(32)), expiration: 100 });
    expect(SignedPayloads.verify(signer, proof, other, 'RecoveryCommitmentPayload')).toBe(false);
  });

  test('an Ethereum EIP-712 signature (as wallets make it) verifies, and only on its own network', async () => {
    const key = createRandomKey();
    const signature = await sign(key.privateKey, createRecoveryCommitmentPayload(commitment, 100), 'Dev');
    const payload = new SignedPayloads(api).recoveryCommitment({ recoveryCommitment: commitment, expiration: 100 });
    const signer = u8aToHex(ethereumAccountId(hexToU8a(key.address.ethereumAddress)));
    const proof: UserSignature = { algo: 'Ecdsa', encodedValue: signature.Ecdsa };
    expect(SignedPayloads.verify(signer, proof, payload, 'RecoveryCommitmentPayload', DEV_CHAIN_ID)).toBe(true);
    expect(SignedPayloads.verify(signer, proof, payload, 'RecoveryCommitmentPayload', MAINNET_CHAIN_ID)).toBe(false);
  });
});
