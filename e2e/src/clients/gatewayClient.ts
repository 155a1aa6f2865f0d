import { ChainQueries, connectChain, type ChainConnection } from '@frequency-gateway/chain';
import { callJson, untilSettled, type JsonAnswer } from '@frequency-gateway/devstack';
import {
  encodeAuthorizationPayload,
  SiwfUser,
  type KeyKind,
  type SiwfResponse,
} from '@frequency-gateway/devstack/siwf';

/** A content-publishing request record (GET /v1/requests/{referenceId}). */
export interface RequestRecord {
  referenceId: string;
  state: string;
  batch?: { cid: string };
  history: { state: string; at: string }[];
}

/** The URL the login message names; the gateway under test accepts it (SIWF_V2_URI_VALIDATION). */
export const LOGIN_URI = 'https://localhost/login';

/** Where a client reaches the gateway: the three apis, the IPFS gateway, and the chain (WebSocket). */
export interface GatewayEndpoints {
  account: string;
  contentPublishing: string;
  contentWatcher: string;
  ipfsGateway: string;
  chainUrl: string;
}

/**
 * The gateway as its clients see it, wherever it runs (local processes, containers, a release in the cluster): the
 * apis, the IPFS gateway, and a chain client for what users sign (payload codecs, expiration blocks, intents).
 */
export class GatewayClient {
  private readonly notes = new Map<string, Record<string, unknown>>();
  readonly account: string;
  readonly contentPublishing: string;
  readonly contentWatcher: string;
  readonly ipfsGateway: string;

  private constructor(
    endpoints: GatewayEndpoints,
    readonly chain: ChainConnection,
    private readonly onClose: () => void,
  ) {
    ({
      account: this.account,
      contentPublishing: this.contentPublishing,
      contentWatcher: this.contentWatcher,
      ipfsGateway: this.ipfsGateway,
    } = endpoints);
  }

  /** Connects to the chain at `endpoints.chainUrl`; `onClose` runs when the client closes (e.g. a port-forward). */
  static async connect(endpoints: GatewayEndpoints, onClose: () => void = () => undefined): Promise<GatewayClient> {
    return new GatewayClient(endpoints, await connectChain({ url: endpoints.chainUrl }), onClose);
  }

  /**
   * A new user signs up through SIWF (a handle claimed unless `handle` is undefined) with a key of `kind`:
   * POST /v2/accounts/siwf. Resolves with the user and the sign-up's referenceId (the account is made once the
   * chain finalizes it).
   */
  async signUp(
    handle: string | undefined,
    intentNames: string[] = ['dsnp.broadcast', 'dsnp.reply'],
    kind: KeyKind = 'sr25519',
  ): Promise<{ user: SiwfUser; referenceId: string }> {
    const queries = new ChainQueries(this.chain.api);
    const intents = await Promise.all(
      intentNames.map(async (name) => {
        const intent = await queries.intentByName(name);
        if (!intent) throw new Error(`the chain has no intent ${name}`);
        return intent;
      }),
    );
    const user = SiwfUser.create(kind);
    const response = await user.signUp(this.chain.api, {
      providerId: 1,
      intentIds: intents.map((intent) => intent.intentId),
      // Near the chain's 100-block mortality window: on the fast devchains of the load suites (500 ms blocks) this
      // is 45 s, which a transaction dropped by a reorganisation and sent again by the tracker must still meet.
      expiration: (await queries.finalizedBlock()).number + 90,
      ...(handle === undefined ? {} : { handle }),
      login: { uri: LOGIN_URI },
    });
    const answer = await callJson(this.account, 'POST', '/v2/accounts/siwf', {
      authorizationPayload: encodeAuthorizationPayload(response),
    });
    if (answer.status !== 200 || typeof answer.body.signUpReferenceId !== 'string')
      throw new Error(`sign-up refused: ${answer.status} ${JSON.stringify(answer.body)}`);
    return { user, referenceId: answer.body.signUpReferenceId };
  }

  /** A returning user signs in with their SIWF response (`SiwfUser.login`): POST /v2/accounts/siwf. */
  loginWith(response: SiwfResponse): Promise<JsonAnswer> {
    return callJson(this.account, 'POST', '/v2/accounts/siwf', {
      authorizationPayload: encodeAuthorizationPayload(response),
    });
  }

  /** The user's signed request for a new handle (GET /v1/handles/change/{handle} gives the payload to sign). */
  async handleChange(user: SiwfUser, handle: string): Promise<JsonAnswer> {
    const payload = await callJson(this.account, 'GET', `/v1/handles/change/${handle}`);
    if (payload.status !== 200) throw new Error(`handle payload: ${payload.status} ${JSON.stringify(payload.body)}`);
    const signed = payload.body.payload as { baseHandle: string; expiration: number };
    return callJson(this.account, 'POST', '/v1/handles/change', {
      accountId: user.address,
      payload: signed,
      proof: await user.claimHandleProof(this.chain.api, signed),
    });
  }

  /** Uploads a PNG (POST /v2/asset/upload); resolves with its CID. */
  async uploadImage(bytes: Uint8Array): Promise<string> {
    const form = new FormData();
    form.append('files', new Blob([bytes], { type: 'image/png' }), 'picture.png');
    const response = await fetch(`${this.contentPublishing}/v2/asset/upload`, { method: 'POST', body: form });
    const body = (await response.json()) as { files?: { cid?: string; error?: string }[] };
    const cid = body.files?.[0]?.cid;
    if (response.status !== 202 || !cid) throw new Error(`upload: ${response.status} ${JSON.stringify(body)}`);
    return cid;
  }

  /** POST /v1/content/{msaId}/broadcast: the answer (202 with a referenceId when accepted). */
  broadcast(msaId: string, content: Record<string, unknown>): Promise<JsonAnswer> {
    return callJson(this.contentPublishing, 'POST', `/v1/content/${msaId}/broadcast`, { content });
  }

  /** GET /v1/requests/{referenceId} of the content-publishing api, or of the account api (a sign-up, a handle). */
  async record(referenceId: string, service: 'content-publishing' | 'account' = 'content-publishing') {
    const base = service === 'account' ? this.account : this.contentPublishing;
    const answer = await callJson(base, 'GET', `/v1/requests/${referenceId}`);
    return answer.status === 200 ? (answer.body as unknown as RequestRecord) : undefined;
  }

  /** Waits until every request is finalized or failed; resolves with the records, in the order of the ids. */
  async settled(
    referenceIds: string[],
    timeoutMs: number,
    service: 'content-publishing' | 'account' = 'content-publishing',
  ): Promise<RequestRecord[]> {
    return untilSettled(referenceIds, (id) => this.record(id, service), timeoutMs);
  }

  /** The activity content an announcement's url names, read through the IPFS gateway (cached by CID). */
  async noteAt(url: string): Promise<Record<string, unknown>> {
    const cid = /\/ipfs\/([A-Za-z0-9]+)/.exec(url)?.[1];
    if (!cid) throw new Error(`no CID in ${url}`);
    const known = this.notes.get(cid);
    if (known) return known;
    const response = await fetch(`${this.ipfsGateway}/ipfs/${cid}`, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new Error(`IPFS gateway: ${response.status} for ${cid}`);
    const note = (await response.json()) as Record<string, unknown>;
    this.notes.set(cid, note);
    return note;
  }

  /** The chain's finalized block number. */
  async finalizedBlock(): Promise<number> {
    return (await new ChainQueries(this.chain.api).finalizedBlock()).number;
  }

  private closed = false;

  async close(): Promise<void> {
    if (!this.closed) await this.chain.close();
    this.onClose();
    this.closed = true;
  }
}
