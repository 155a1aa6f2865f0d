import {
  accountCalls,
  bytesOfHex,
  chainTypeOf,
  eip712ChainIdOf,
  ethereumAccountId,
  fromChain,
  hexOf,
  publicKeyOf,
  SignedPayloads,
  ss58Of,
  type AccountCall,
  type ChainConnection,
  type ChainType,
  type ChainValue,
  type Eip712Payload,
  type OpeningChain,
  type SchemaDirectory,
  type UserSignature,
} from '@frequency-gateway/chain';
import { badRequest, forbidden, serviceUnavailable } from '@frequency-gateway/platform';
import {
  generateAuthenticationUrl,
  generateEncodedSignedRequest,
  isCredentialEmail,
  isCredentialGraph,
  isCredentialPhone,
  isCredentialRecoverySecret,
  validateSiwfResponse,
  VerifiedEmailAddressCredential,
  VerifiedGraphKeyCredential,
  VerifiedPhoneNumberCredential,
  VerifiedRecoverySecretCredential,
  type SiwfCredentialRequest,
} from '@projectlibertylabs/siwf';
import { z } from 'zod';
import type { EncodedCall } from '../jobs.js';
import { loginMessageTerms, type LoginNonces } from './loginNonces.js';

export interface SiwfSettings {
  providerId: bigint;
  /** The provider's key (PROVIDER_ACCOUNT_SEED_PHRASE); without it the api is read-only. */
  providerSeed: string | undefined;
  /** SIWF_V2_URL; unset: Frequency Access of the chain's network (none for dev chains). */
  siwfUrl: string | undefined;
  /** SIWF_NODE_RPC_URL: the node the user's browser talks to. */
  nodeRpcUrl: string;
  /** SIWF_V2_URI_VALIDATION: where login messages may come from; unset: sign-in is refused. */
  loginUris: string[] | undefined;
  /** How long the exchange of an authorizationCode may take. */
  codeTimeoutMs: number;
  /** How long a route waits for a chain that is still connecting. */
  chainWaitMs: number;
}

/** Frequency Access, by network. */
const FREQUENCY_ACCESS: Partial<Record<ChainType, string>> = {
  'Mainnet-Frequency': 'https://www.frequencyaccess.com/siwa',
  'Paseo-Testnet-Frequency': 'https://testnet.frequencyaccess.com/siwa',
};

export const CREDENTIAL_TYPES = [
  'VerifiedEmailAddressCredential',
  'VerifiedPhoneNumberCredential',
  'VerifiedGraphKeyCredential',
  'VerifiedRecoverySecretCredential',
] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

/** The credential requests of a sign-in: email and phone as one "either" request, the others alone. */
function credentialRequests(types: readonly CredentialType[]): SiwfCredentialRequest[] {
  const wanted = new Set(types);
  const contact = [
    ...(wanted.has('VerifiedEmailAddressCredential') ? [VerifiedEmailAddressCredential] : []),
    ...(wanted.has('VerifiedPhoneNumberCredential') ? [VerifiedPhoneNumberCredential] : []),
  ];
  return [
    ...(wanted.has('VerifiedGraphKeyCredential') ? [VerifiedGraphKeyCredential] : []),
    ...(wanted.has('VerifiedRecoverySecretCredential') ? [VerifiedRecoverySecretCredential] : []),
    ...(contact.length > 0 ? [{ anyOf: contact }] : []),
  ];
}

const hex = z.string().regex(/^0x([0-9a-fA-F]{2})*$/, 'must be 0x-prefixed hex');
const payloadBase = {
  signature: z.object({
    algo: z.string().transform((algo) => algo.toUpperCase()),
    encoding: z.literal('base16'),
    encodedValue: hex,
  }),
  endpoint: z.object({ pallet: z.string(), extrinsic: z.string() }).optional(),
};
const blockNumber = z.number().int().min(0).max(0xffffffff);

/** The parts of a SIWF response this gateway acts on; anything else in it is passed on untouched. */
const responseSchema = z.object({
  userPublicKey: z.object({
    encodedValue: z.string(),
    encoding: z.enum(['base58', 'base16']),
    format: z.enum(['ss58', 'eip-55']),
    type: z.enum(['Sr25519', 'Secp256k1']),
  }),
  payloads: z
    .array(
      z.discriminatedUnion('type', [
        z.object({ ...payloadBase, type: z.literal('login'), payload: z.object({ message: z.string() }) }),
        z.object({
          ...payloadBase,
          type: z.literal('addProvider'),
          payload: z.object({
            authorizedMsaId: z.union([z.number().int().positive(), z.string().regex(/^[1-9]\d*$/)]),
            intentIds: z.array(z.number().int().min(0).max(65535)),
            expiration: blockNumber,
          }),
        }),
        z.object({
          ...payloadBase,
          type: z.literal('claimHandle'),
          payload: z.object({ baseHandle: z.string(), expiration: blockNumber }),
        }),
        z.object({
          ...payloadBase,
          type: z.literal('itemActions'),
          payload: z.object({
            schemaId: z.number().int().min(0).max(65535),
            targetHash: blockNumber,
            expiration: blockNumber,
            actions: z.array(
              z.discriminatedUnion('type', [
                z.object({ type: z.literal('addItem'), payloadHex: hex }),
                z.object({ type: z.literal('deleteItem'), index: z.number().int().min(0).max(65535) }),
              ]),
            ),
          }),
        }),
        z.object({
          ...payloadBase,
          type: z.literal('recoveryCommitment'),
          payload: z.object({ recoveryCommitmentHex: hex, expiration: blockNumber }),
        }),
      ]),
    )
    .min(1),
  credentials: z.array(z.record(z.string(), z.unknown())).optional(),
});
type ParsedResponse = z.infer<typeof responseSchema>;
type ParsedPayload = ParsedResponse['payloads'][number];

/** Which chain call each payload type may ask for, and the EIP-712 type its signature is over. */
const CALLS: Record<Exclude<ParsedPayload['type'], 'login'>, { calls: AccountCall[]; kind: Eip712Payload }> = {
  addProvider: {
    calls: ['msa.createSponsoredAccountWithDelegation', 'msa.grantDelegation'],
    kind: 'AddProvider',
  },
  claimHandle: { calls: ['handles.claimHandle'], kind: 'ClaimHandlePayload' },
  itemActions: { calls: ['statefulStorage.applyItemActionsWithSignatureV2'], kind: 'ItemizedSignaturePayloadV2' },
  recoveryCommitment: { calls: ['msa.addRecoveryCommitment'], kind: 'RecoveryCommitmentPayload' },
};

const ALGORITHMS: Record<string, UserSignature['algo']> = {
  SR25519: 'Sr25519',
  ED25519: 'Ed25519',
  SECP256K1: 'Ecdsa',
  ECDSA: 'Ecdsa',
};

/** The SIWF response as a sign-in callback carries it: base64url of its JSON, the JSON object itself, or null. */
export type AuthorizationPayload = string | Record<string, unknown> | null;

/** A sign-in whose every signature checked out. */
export interface SignIn {
  /** The user's AccountId32 (0x-hex). */
  accountId: `0x${string}`;
  /** The same account in SS58 (Ethereum keys in their unified form). */
  controlKey: string;
  /** The user-signed calls to submit, in the order of the response; empty for a plain login. */
  calls: EncodedCall[];
  /** What makes two sign-ups the same one: the signatures of their chain payloads. */
  identity: string[];
  msaId?: bigint;
  credentials: Record<string, unknown>[];
}

/** The sign-in answer's user details, from the verified credentials. */
export function credentialDetails(credentials: Record<string, unknown>[]) {
  const details: {
    email?: string;
    phoneNumber?: string;
    graphKey?: Record<string, unknown>;
    recoverySecret?: string;
  } = {};
  for (const credential of credentials) {
    const subject = credential.credentialSubject as Record<string, unknown> | undefined;
    if (!subject) continue;
    if (isCredentialEmail(credential)) details.email = String(subject.emailAddress);
    else if (isCredentialPhone(credential)) details.phoneNumber = String(subject.phoneNumber);
    else if (isCredentialGraph(credential)) details.graphKey = subject;
    else if (isCredentialRecoverySecret(credential)) details.recoverySecret = String(subject.recoverySecret);
  }
  return details;
}

/** Error text of the SIWF library that is safe to return (it never echoes the response, which holds secrets). */
function libraryReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.includes('{') || message.length > 300 ? 'the response did not pass validation' : message;
}

/**
 * Sign In With Frequency v2: the signed request that starts a sign-in at Frequency Access, and the check of
 * what comes back. The library checks the login message (signature, domain, address, expiry) and the
 * credentials; every chain payload is checked here against the exact bytes the chain will check, with the
 * chain's own types, because the library checks only the first payload and mis-encodes item actions.
 */
export class SiwfService {
  constructor(
    private readonly chain: OpeningChain,
    private readonly directory: SchemaDirectory,
    private readonly nonces: LoginNonces,
    /** How the SIWF service is asked for the response behind an authorizationCode (the global fetch in a component). */
    private readonly fetchPayload: typeof fetch,
    private readonly settings: SiwfSettings,
  ) {}

  get readOnly(): boolean {
    return !this.settings.providerSeed;
  }

  private connection(): Promise<ChainConnection> {
    return fromChain(() => this.chain.ready(this.settings.chainWaitMs));
  }

  private endpoint(chainType: ChainType): string {
    const endpoint = this.settings.siwfUrl ?? FREQUENCY_ACCESS[chainType];
    if (!endpoint)
      throw serviceUnavailable(
        `SIWF_V2_URL is not set and this chain (${chainType}) has no Frequency Access service of its own`,
      );
    return endpoint.replace(/\/+$/, '');
  }

  /** The signed request and the URL that sends the user to sign in (GET /v2/accounts/siwf). */
  async redirect(callbackUrl: string, permissions: string[], credentials: CredentialType[]) {
    const seed = this.settings.providerSeed;
    if (!seed) throw forbidden('Sign-in requests are signed with the provider key, and this gateway has none');
    const { api } = await this.connection();
    const chainType = chainTypeOf(api.genesisHash.toHex());
    const endpoint = this.endpoint(chainType);
    const intents = await fromChain(() =>
      Promise.all(permissions.map((name) => this.directory.intentByName(name.replace(/@v\d+$/, '')))),
    );
    const unknown = permissions
      .map((name, index) => (intents[index] ? undefined : `permissions[${index}]: no intent named ${name} on chain`))
      .filter((problem): problem is string => problem !== undefined);
    if (unknown.length > 0) throw badRequest(unknown);
    const ethereum = seed.startsWith('0x');
    const signedRequest = await generateEncodedSignedRequest(
      ethereum ? 'base16' : 'base58',
      ethereum ? 'eip-55' : 'ss58',
      ethereum ? 'Secp256k1' : 'Sr25519',
      chainType,
      seed,
      callbackUrl,
      intents.map((intent) => intent!.intentId),
      credentialRequests(credentials),
    );
    const redirectUrl = generateAuthenticationUrl(
      signedRequest,
      new URLSearchParams({ frequencyRpcUrl: this.settings.nodeRpcUrl }),
      { endpoint, chainType },
    );
    return { signedRequest, redirectUrl, frequencyRpcUrl: this.settings.nodeRpcUrl };
  }

  /** The SIWF response behind an authorizationCode, from the SIWF service's payload endpoint. */
  private async exchange(code: string, chainType: ChainType): Promise<unknown> {
    const url = `${this.endpoint(chainType)}/api/payload?authorizationCode=${encodeURIComponent(code)}`;
    let answer: Response;
    try {
      answer = await this.fetchPayload(url, { signal: AbortSignal.timeout(this.settings.codeTimeoutMs) });
    } catch {
      throw serviceUnavailable('The SIWF service could not be reached to exchange the authorizationCode; try again');
    }
    if (answer.status === 404 || answer.status === 400 || answer.status === 410)
      throw badRequest(`authorizationCode: the SIWF service does not know this code (HTTP ${answer.status})`);
    if (!answer.ok) throw serviceUnavailable(`The SIWF service answered HTTP ${answer.status} for the code`);
    return answer.json().catch(() => {
      throw serviceUnavailable('The SIWF service answered the code exchange with something that is not JSON');
    });
  }

  /**
   * Checks a sign-in (POST /v2/accounts/siwf) and returns who it is and what to submit. The response is the
   * `authorizationPayload` (base64url of its JSON, or the JSON object itself) or, when that is null or absent,
   * what the SIWF service gives for the `authorizationCode`. A login message is accepted once.
   */
  async verify(body: {
    authorizationPayload?: AuthorizationPayload | undefined;
    authorizationCode?: string | undefined;
  }) {
    const loginUris = this.settings.loginUris;
    if (!loginUris)
      throw serviceUnavailable('Sign-in is not configured: set SIWF_V2_URI_VALIDATION to the accepted login URIs');
    const connection = await this.connection();
    const { api } = connection;
    const chainType = chainTypeOf(api.genesisHash.toHex());
    const payload = body.authorizationPayload ?? undefined;
    const field = payload !== undefined ? 'authorizationPayload' : 'authorizationCode';
    let raw: unknown;
    if (typeof payload === 'string') {
      try {
        raw = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw badRequest('authorizationPayload: must be the base64url encoding of a SIWF response (JSON)');
      }
    } else if (payload !== undefined) {
      raw = payload;
    } else if (body.authorizationCode !== undefined) {
      raw = await this.exchange(body.authorizationCode, chainType);
    } else {
      throw badRequest('authorizationCode: is required when authorizationPayload is null or absent');
    }
    const parsed = responseSchema.safeParse(raw);
    if (!parsed.success)
      throw badRequest(
        parsed.error.issues.map((issue) => `${[field, ...issue.path].join('.')}: ${issue.message.toLowerCase()}`),
      );
    const response = parsed.data;
    const accountId = this.accountOf(response, field);

    const login = response.payloads.find((payload) => payload.type === 'login');
    const addProvider = response.payloads.find((payload) => payload.type === 'addProvider');
    if (!login && !addProvider) throw badRequest(`${field}: a SIWF response needs a login or an addProvider payload`);
    if (login || response.credentials?.length) {
      // The library checks the login message and the credentials; the chain payloads are checked below.
      const part = { userPublicKey: response.userPublicKey, payloads: login ? [login] : [], ...credentialsOf(raw) };
      await validateSiwfResponse(part, { chainType, loginMsgUri: loginUris, endpoint: '' }).catch((error) => {
        throw badRequest(`${field}: ${libraryReason(error)}`);
      });
    }
    const terms = login
      ? loginMessageTerms(
          login.payload.message,
          `${field}.payloads[${response.payloads.indexOf(login)}].payload.message`,
        )
      : undefined;

    const calls = await this.chainCalls(connection, response, accountId, field, chainType);
    if (calls.length > 0 && this.readOnly)
      throw forbidden('New accounts are submitted with the provider key, and this gateway has none (read-only mode)');
    // As the account look-up answers: a user whose sign-up is not final yet has no msaId.
    const msaId = await fromChain(async () => (await connection.queries.atFinalized()).msaIdOf(hexOf(accountId)));
    const identity = calls.map(({ signature }) => signature);
    // Last, so that a sign-in refused for another reason (or the chain away) leaves the login message unused.
    if (terms)
      await this.nonces.use(
        hexOf(accountId),
        terms,
        calls.length > 0 ? { kind: 'sign-up', identity } : { kind: 'login' },
        field,
      );
    return {
      accountId: hexOf(accountId),
      controlKey: ss58Of(accountId, api.registry.chainSS58),
      calls: calls.map(({ call }) => call),
      identity,
      ...(msaId === undefined ? {} : { msaId }),
      credentials: (credentialsOf(raw).credentials ?? []) as Record<string, unknown>[],
    } satisfies SignIn;
  }

  private accountOf(response: ParsedResponse, field: string): Uint8Array {
    const key = response.userPublicKey;
    try {
      if (key.type === 'Secp256k1') {
        const address = bytesOfHex(key.encodedValue);
        if (address.length !== 20) throw new Error('not 20 bytes');
        return ethereumAccountId(address);
      }
      return publicKeyOf(key.encodedValue);
    } catch {
      throw badRequest(`${field}.userPublicKey.encodedValue: not a ${key.type} public key`);
    }
  }

  /** Every chain payload checked (endpoint, provider, expiry, handle, signature) and turned into its call. */
  private async chainCalls(
    connection: ChainConnection,
    response: ParsedResponse,
    accountId: Uint8Array,
    field: string,
    chainType: ChainType,
  ): Promise<{ call: EncodedCall; signature: string }[]> {
    const { api, queries } = connection;
    const payloads = new SignedPayloads(api);
    const builder = accountCalls(api);
    // The announced finalized head: no round trip per sign-in (the subscription is at most a block behind).
    const announced = connection.heads().finalized;
    const finalized = announced >= 0 ? { number: announced } : await fromChain(() => queries.finalizedBlock());
    const chainId = eip712ChainIdOf(chainType);
    const signer = hexOf(accountId);
    const problems: string[] = [];
    const out: { call: EncodedCall; signature: string }[] = [];

    for (const [index, item] of response.payloads.entries()) {
      if (item.type === 'login') continue;
      const at = `${field}.payloads[${index}]`;
      const rule = CALLS[item.type];
      const call = `${item.endpoint?.pallet}.${item.endpoint?.extrinsic}` as AccountCall;
      if (!rule.calls.includes(call)) {
        problems.push(`${at}.endpoint: a ${item.type} payload cannot ask for ${call}`);
        continue;
      }
      const algo = ALGORITHMS[item.signature.algo];
      if (!algo) {
        problems.push(`${at}.signature.algo: unknown algorithm ${item.signature.algo}`);
        continue;
      }
      if (item.payload.expiration <= finalized.number) {
        problems.push(
          `${at}.payload.expiration: expired at block ${item.payload.expiration} (the chain is at ${finalized.number})`,
        );
        continue;
      }
      let codec: ChainValue;
      if (item.type === 'addProvider') {
        if (BigInt(item.payload.authorizedMsaId) !== this.settings.providerId) {
          problems.push(
            `${at}.payload.authorizedMsaId: addressed to provider ${item.payload.authorizedMsaId}, this gateway is provider ${this.settings.providerId}`,
          );
          continue;
        }
        codec = payloads.addProvider({ ...item.payload, authorizedMsaId: BigInt(item.payload.authorizedMsaId) });
      } else if (item.type === 'claimHandle') {
        if (!(await fromChain(() => queries.isValidHandle(item.payload.baseHandle)))) {
          problems.push(`${at}.payload.baseHandle: ${JSON.stringify(item.payload.baseHandle)} is not a valid handle`);
          continue;
        }
        codec = payloads.claimHandle(item.payload);
      } else if (item.type === 'itemActions') {
        codec = payloads.itemizedV2({
          ...item.payload,
          actions: item.payload.actions.map((action) =>
            action.type === 'addItem'
              ? { Add: { data: action.payloadHex as `0x${string}` } }
              : { Delete: { index: action.index } },
          ),
        });
      } else {
        codec = payloads.recoveryCommitment({
          recoveryCommitment: item.payload.recoveryCommitmentHex,
          expiration: item.payload.expiration,
        });
      }
      const proof = { algo, encodedValue: item.signature.encodedValue };
      if (!SignedPayloads.verify(signer, proof, codec, rule.kind, chainId)) {
        problems.push(`${at}.signature: not a signature of this ${item.type} payload by the user's key`);
        continue;
      }
      const encoded = builder.build(call, signer, proof, codec);
      out.push({
        call: {
          pallet: encoded.section,
          extrinsicName: encoded.method,
          encodedExtrinsic: encoded.toHex() as `0x${string}`,
        },
        signature: item.signature.encodedValue.toLowerCase(),
      });
    }
    if (problems.length > 0) throw badRequest(problems);
    return out;
  }
}

/** The credentials of a raw response, exactly as received (the library verifies their proofs over them). */
function credentialsOf(raw: unknown): { credentials?: unknown[] } {
  const credentials = (raw as { credentials?: unknown }).credentials;
  return Array.isArray(credentials) ? { credentials } : {};
}
