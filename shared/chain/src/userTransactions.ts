import { inSpan, SpanKind } from '@frequency-gateway/platform';
import type { ApiPromise } from '@polkadot/api';
import type { SubmittableExtrinsic } from '@polkadot/api/types';
import type { ExtrinsicPayload } from '@polkadot/types/interfaces';
import type { Signer, SignerResult } from '@polkadot/types/types';
import { compactAddLength, hexToU8a, isHex, u8aConcat, u8aToHex } from '@polkadot/util';
import { blake2AsU8a } from '@polkadot/util-crypto';
import { ChainTiming } from './timing.js';
import { sendSigned } from './sending.js';
import { signatureReadings, verifyExactly, type UserSignature } from './signatures/verify.js';
import type { BeforeSubmit, SignedTransaction } from './submitter.js';

/** The calls a user signs and pays for themselves (both are free on Frequency). */
export type UserCall = { call: 'msa.retireMsa' } | { call: 'msa.revokeDelegationByDelegator'; providerId: bigint };

/** What a user is given to sign: the unsigned extrinsic, and the exact bytes of its signing payload. */
export interface PreparedUserTransaction {
  encodedExtrinsic: `0x${string}`;
  payloadToSign: `0x${string}`;
}

/** A prepared transaction as the user sends it back: with their account and their signature of the payload. */
export interface SignedUserTransaction extends PreparedUserTransaction {
  accountId: `0x${string}`;
  signature: string;
}

/** A signed user transaction that passed every check: the signature as the chain reads it, and its era. */
export interface CheckedUserTransaction {
  signature: UserSignature;
  /** The payload the user signed, decoded. */
  payload: ExtrinsicPayload;
  nonce: number;
  birth: number;
  death: number;
}

/** Why a signed user transaction cannot go on chain, naming the request field at fault. */
export class UserTransactionError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.join('; '));
    this.name = 'UserTransactionError';
  }
}

const SIGNATURE_PLACEHOLDER = u8aToHex(new Uint8Array(65).fill(1));

/**
 * Transactions the user signs with their own key, such as retiring their MSA. The gateway prepares one (a
 * mortal era from the finalized head, the account's next nonce) and hands out the exact payload bytes to sign;
 * the signed transaction is then reassembled from those same bytes, so what the chain verifies is what the user
 * signed, however far the chain has moved on since.
 */
export class UserTransactions {
  constructor(
    private readonly api: ApiPromise,
    /** The timing contract (default ChainTiming.DEFAULT): its `eraPeriod` is the era of a prepared transaction. */
    private readonly options: { timing?: ChainTiming } = {},
  ) {}

  private extrinsicOf(call: UserCall): SubmittableExtrinsic<'promise'> {
    const { msa } = this.api.tx;
    return call.call === 'msa.retireMsa' ? msa.retireMsa() : msa.revokeDelegationByDelegator(call.providerId);
  }

  /** Which user call an unsigned extrinsic is, if it is one of them. */
  callOf(encodedExtrinsic: string): UserCall | undefined {
    try {
      const { method } = this.api.tx(encodedExtrinsic);
      if (method.section === 'msa' && method.method === 'retireMsa') return { call: 'msa.retireMsa' };
      if (method.section === 'msa' && method.method === 'revokeDelegationByDelegator')
        return {
          call: 'msa.revokeDelegationByDelegator',
          providerId: BigInt((method.args[0] as unknown as { toString(): string }).toString()),
        };
    } catch {
      // Not an extrinsic of this runtime.
    }
    return undefined;
  }

  /** The unsigned extrinsic of `call` for `account` and the payload bytes its owner signs (as signRaw gets them). */
  async prepare(account: `0x${string}`, call: UserCall): Promise<PreparedUserTransaction> {
    const { api } = this;
    const extrinsic = this.extrinsicOf(call);
    const encodedExtrinsic = extrinsic.toHex() as `0x${string}`;
    const finalized = await api.rpc.chain.getFinalizedHead();
    const [header, nonce] = await Promise.all([
      api.rpc.chain.getHeader(finalized),
      api.rpc.system.accountNextIndex(account),
    ]);
    const era = api.createType('ExtrinsicEra', {
      current: header.number.toNumber(),
      period: (this.options.timing ?? ChainTiming.DEFAULT).eraPeriod,
    });
    let payloadToSign: `0x${string}` | undefined;
    // polkadot-js builds the payload (every signed extension included) and hands it to the signer: keep it.
    const capture: Signer = {
      signRaw: async (raw): Promise<SignerResult> => {
        payloadToSign = raw.data as `0x${string}`;
        return { id: 0, signature: SIGNATURE_PLACEHOLDER };
      },
    };
    await extrinsic.signAsync(account, { signer: capture, nonce, era, blockHash: finalized });
    if (!payloadToSign) throw new Error('polkadot-js produced no payload to sign');
    return { encodedExtrinsic, payloadToSign };
  }

  /**
   * Checks a signed user transaction against what it claims to be: the extrinsic is `expected`, unsigned; the
   * payload signs that call for this chain and runtime, its era has not ended and its nonce is not used; the
   * signature is the account's over the payload. Throws a UserTransactionError naming each field at fault.
   */
  async check(signed: SignedUserTransaction, expected: UserCall): Promise<CheckedUserTransaction> {
    const { api } = this;
    const problems: string[] = [];
    const fail = (problem: string) => new UserTransactionError([...problems, problem]);
    const wanted = this.extrinsicOf(expected).toHex();
    if (signed.encodedExtrinsic.toLowerCase() !== wanted)
      problems.push(`encodedExtrinsic: not the unsigned ${expected.call} extrinsic for this request`);
    const payload = this.payloadOf(signed.payloadToSign);
    if (!payload) throw fail('payloadToSign: not a signing payload of this runtime');
    if (payload.method.toHex() !== this.api.tx(wanted).method.toHex())
      problems.push(`payloadToSign: signs another call than ${expected.call}`);
    if (payload.genesisHash.toHex() !== api.genesisHash.toHex()) throw fail('payloadToSign: made for another chain');
    if (
      !payload.specVersion.eq(api.runtimeVersion.specVersion) ||
      !payload.transactionVersion.eq(api.runtimeVersion.transactionVersion)
    )
      problems.push('payloadToSign: made for an earlier runtime; request a new payload');
    if (!payload.era.isMortalEra) throw fail('payloadToSign: an immortal transaction; request a new payload');
    const era = await this.eraOf(payload);
    if (!era) throw fail('payloadToSign: its block is not on this chain');
    const [best, next] = await Promise.all([
      api.rpc.chain.getHeader().then((header) => header.number.toNumber()),
      api.rpc.system.accountNextIndex(signed.accountId).then((nonce) => nonce.toNumber()),
    ]);
    if (era.death <= best + 1)
      problems.push(`payloadToSign: its era ended at block ${era.death}; request a new payload`);
    const nonce = payload.nonce.toNumber();
    if (nonce < next)
      problems.push(`payloadToSign: nonce ${nonce} is already used (the account is at ${next}); request a new payload`);
    const signature = this.verify(signed, payload);
    if (!signature) problems.push(`signature: not a signature of payloadToSign by ${signed.accountId}`);
    if (problems.length > 0 || !signature) throw new UserTransactionError(problems);
    return { signature, payload, nonce, ...era };
  }

  /**
   * Puts the user's signature on the extrinsic with the era, nonce and extensions of the payload they signed,
   * lets `beforeSubmit` record it, and submits it. Refusals come back as SubmissionError.
   */
  async submit(
    signed: SignedUserTransaction,
    checked: CheckedUserTransaction,
    beforeSubmit?: BeforeSubmit,
  ): Promise<SignedTransaction> {
    const extrinsic = this.api.tx(signed.encodedExtrinsic);
    const { algo, encodedValue } = checked.signature;
    extrinsic.addSignature(signed.accountId, { [algo]: encodedValue } as never, checked.payload.toU8a());
    const transaction: SignedTransaction = {
      hash: extrinsic.hash.toHex() as `0x${string}`,
      nonce: checked.nonce,
      birth: checked.birth,
      death: checked.death,
      signedFor: {
        specVersion: checked.payload.specVersion.toNumber(),
        transactionVersion: checked.payload.transactionVersion.toNumber(),
      },
      extrinsic,
    };
    const attributes = { 'chain.tx_hash': transaction.hash, 'chain.user_signed': true };
    return inSpan('chain submit', { kind: SpanKind.CLIENT, attributes }, async () => {
      await beforeSubmit?.(transaction);
      await sendSigned(this.api, extrinsic);
      return transaction;
    });
  }

  /**
   * The signing payload behind the bytes a wallet signs. Those bytes hold the call bare (no length prefix), so
   * the call is read first to find where the extensions start.
   */
  private payloadOf(hex: string): ExtrinsicPayload | undefined {
    if (!isHex(hex)) return undefined;
    try {
      const bytes = hexToU8a(hex);
      const callLength = this.api.createType('Call', bytes).encodedLength;
      const prefixed = u8aConcat(compactAddLength(bytes.subarray(0, callLength)), bytes.subarray(callLength));
      const payload = this.api.createType('ExtrinsicPayload', prefixed, { version: 4 });
      // Every byte must be read: trailing bytes mean another layout than this runtime's.
      return u8aToHex(payload.toU8a({ method: true })) === hex.toLowerCase() ? payload : undefined;
    } catch {
      return undefined;
    }
  }

  /** The blocks the payload's mortal era covers, read from the block it names. */
  private async eraOf(payload: ExtrinsicPayload): Promise<{ birth: number; death: number } | undefined> {
    try {
      const header = await this.api.rpc.chain.getHeader(payload.blockHash);
      const current = header.number.toNumber();
      const mortal = payload.era.asMortalEra;
      return { birth: mortal.birth(current), death: mortal.death(current) };
    } catch {
      return undefined;
    }
  }

  /** The reading of the signature that the chain accepts over the payload's bytes (hashed past 256 bytes). */
  private verify(signed: SignedUserTransaction, payload: ExtrinsicPayload): UserSignature | undefined {
    if (!isHex(signed.signature)) return undefined;
    let message = payload.toU8a({ method: true });
    if (message.length > 256) message = blake2AsU8a(message, 256);
    const account = hexToU8a(signed.accountId);
    return signatureReadings(account, hexToU8a(signed.signature)).find((reading) =>
      verifyExactly(message, { type: reading.algo, bytes: hexToU8a(reading.encodedValue) }, account),
    );
  }
}
