import type { Codec } from '@polkadot/types/types';
import { u8aConcat, u8aToHex } from '@polkadot/util';
import { keccakAsU8a } from '@polkadot/util-crypto';
import { bigintOf, msaIdOf, numberOf, someOf } from '../../runtime/codecs.js';
import type { AccountHex, CallArgs, DispatchContext, PalletRuntime, ValidationContext } from '../../runtime/context.js';
import { DispatchFailure, INVALID, ModuleError } from '../../runtime/errors.js';
import { ethereumAccountId, verifyPayloadSignature } from '@frequency-gateway/chain';
import { readAccount, spendable, transfer } from '../balances.js';
import { msaEthereumAddress } from './ethereumAddress.js';
import { addKey, createMsa, isProvider, keyCount, msaOf, registerProvider, removeKey, requireMsa } from './accounts.js';
import {
  addDelegation,
  hasActiveDelegations,
  isActive,
  readDelegation,
  revokeDelegation,
  upsertDelegation,
} from './delegations.js';
import { registerSignature, signatureUsable } from './signatureRegistry.js';

export interface MsaLimits {
  maxPublicKeysPerMsa: number;
  maxGrantsPerDelegation: number;
  maxProviderNameSize: number;
  mortalityWindowSize: number;
  maxSignaturesStored: number;
}

/** `InvalidTransaction::Custom(n)` codes of the MSA's CheckFreeExtrinsicUse extension. */
const VALIDITY = {
  invalidDelegation: 0,
  invalidMsaKey: 1,
  providerCannotBeRetired: 2,
  moreThanOneKey: 3,
  invalidSelfRemoval: 4,
  notKeyOwner: 5,
  activeDelegations: 6,
  handleNotRetired: 7,
  msaOwnershipInvalidSignature: 8,
  insufficientBalanceToWithdraw: 9,
  ineligibleOrigin: 10,
  msaHoldsTokens: 11,
} as const;

const signed = (context: DispatchContext): AccountHex => {
  if (context.origin.type !== 'signed') throw new DispatchFailure('BadOrigin');
  return context.origin.who;
};

const root = (context: DispatchContext) => {
  if (context.origin.type !== 'root') throw new DispatchFailure('BadOrigin');
};

const account = (value: Codec | undefined) => (value as Codec).toHex() as AccountHex;

interface AddProvider {
  authorizedMsaId: Codec;
  intentIds: Codec[];
  expiration: Codec;
}

interface AuthorizedKeyData extends Codec {
  discriminant: Codec;
  msaId: Codec;
  expiration: Codec;
  authorizedPublicKey: Codec;
}

/** The account that holds an MSA's tokens: its synthetic Ethereum address as an Ethereum-style AccountId32. */
const msaTokenAccount = (msaId: bigint) => u8aToHex(ethereumAccountId(msaEthereumAddress(msaId))) as AccountHex;

export function msaPallet(limits: MsaLimits, existentialDeposit: bigint): PalletRuntime {
  const register = (context: DispatchContext, proof: Codec, expiration: number) =>
    registerSignature(context, proof, expiration, limits.mortalityWindowSize, limits.maxSignaturesStored);

  /** The delegator's signature and registry entry for an AddProvider payload, then its fields. */
  const acceptAddProvider = (context: DispatchContext, args: CallArgs, signatureError: string) => {
    const payload = args.addProviderPayload as unknown as AddProvider & Codec;
    const delegatorKey = account(args.delegatorKey);
    if (!verifyPayloadSignature(delegatorKey, args.proof as Codec, payload, 'AddProvider'))
      throw new ModuleError('Msa', signatureError);
    register(context, args.proof as Codec, numberOf(payload.expiration));
    return { delegatorKey, authorized: msaIdOf(payload.authorizedMsaId), intents: payload.intentIds.map(numberOf) };
  };

  const providerEntry = (name: Codec) => ({
    defaultName: name,
    localizedNames: new Map(),
    defaultLogo250100PngCid: '',
    localizedLogo250100PngCids: new Map(),
  });

  return {
    name: 'Msa',
    feeless: [
      'revokeDelegationByDelegator',
      'revokeDelegationByProvider',
      'deleteMsaPublicKey',
      'retireMsa',
      'withdrawTokens',
    ],
    calls: {
      create: (context) => void createMsa(context, signed(context), limits.maxPublicKeysPerMsa),

      createProvider: (context, args) => {
        const msaId = requireMsa(context, signed(context));
        const name = args.providerName as Codec;
        registerProvider(context, msaId, providerEntry(name), name.toU8a(true).length, limits.maxProviderNameSize);
      },

      createProviderViaGovernance: (context, args) => {
        root(context);
        const msaId = requireMsa(context, account(args.providerKey));
        const name = args.providerName as Codec;
        registerProvider(context, msaId, providerEntry(name), name.toU8a(true).length, limits.maxProviderNameSize);
      },

      createProviderViaGovernanceV2: (context, args) => {
        root(context);
        const msaId = requireMsa(context, account(args.providerKey));
        const payload = args.payload as unknown as { defaultName: Codec } & Codec;
        registerProvider(context, msaId, payload, payload.defaultName.toU8a(true).length, limits.maxProviderNameSize);
      },

      createSponsoredAccountWithDelegation: (context, args) => {
        const { delegatorKey, authorized, intents } = acceptAddProvider(context, args, 'InvalidSignature');
        const provider = requireMsa(context, signed(context));
        if (authorized !== provider) throw new ModuleError('Msa', 'UnauthorizedProvider');
        if (!isProvider(context, provider)) throw new ModuleError('Msa', 'ProviderNotRegistered');
        const delegator = createMsa(context, delegatorKey, limits.maxPublicKeysPerMsa);
        addDelegation(context, delegator, provider, intents, limits.maxGrantsPerDelegation);
        context.deposit('Msa', 'DelegationGranted', { providerId: provider, delegatorId: delegator });
      },

      grantDelegation: (context, args) => {
        const { delegatorKey, authorized, intents } = acceptAddProvider(
          context,
          args,
          'AddProviderSignatureVerificationFailed',
        );
        const provider = requireMsa(context, signed(context));
        const delegator = requireMsa(context, delegatorKey);
        if (provider === delegator) throw new ModuleError('Msa', 'InvalidSelfProvider');
        if (!isProvider(context, provider)) throw new ModuleError('Msa', 'ProviderNotRegistered');
        if (authorized !== provider) throw new ModuleError('Msa', 'UnauthorizedDelegator');
        upsertDelegation(context, delegator, provider, intents, limits.maxGrantsPerDelegation);
        context.deposit('Msa', 'DelegationGranted', { providerId: provider, delegatorId: delegator });
      },

      revokeDelegationByDelegator: (context, args) =>
        revokeDelegation(context, requireMsa(context, signed(context)), msaIdOf(args.providerMsaId as Codec)),

      revokeDelegationByProvider: (context, args) =>
        revokeDelegation(context, msaIdOf(args.delegator as Codec), requireMsa(context, signed(context))),

      addPublicKeyToMsa: (context, args) => {
        signed(context);
        const payload = args.addKeyPayload as unknown as {
          msaId: Codec;
          expiration: Codec;
          newPublicKey: Codec;
        } & Codec;
        const owner = account(args.msaOwnerPublicKey);
        const newKey = account(payload.newPublicKey);
        if (!verifyPayloadSignature(owner, args.msaOwnerProof as Codec, payload, 'AddKeyData'))
          throw new ModuleError('Msa', 'MsaOwnershipInvalidSignature');
        if (!verifyPayloadSignature(newKey, args.newKeyOwnerProof as Codec, payload, 'AddKeyData'))
          throw new ModuleError('Msa', 'NewKeyOwnershipInvalidSignature');
        register(context, args.msaOwnerProof as Codec, numberOf(payload.expiration));
        register(context, args.newKeyOwnerProof as Codec, numberOf(payload.expiration));
        const msaId = requireMsa(context, owner);
        if (BigInt(msaId) !== bigintOf(payload.msaId)) throw new ModuleError('Msa', 'NotMsaOwner');
        addKey(context, msaId, newKey, limits.maxPublicKeysPerMsa);
        context.deposit('Msa', 'PublicKeyAdded', { msaId, key: newKey });
      },

      addRecoveryCommitment: (context, args) => {
        signed(context);
        const owner = account(args.msaOwnerKey);
        const payload = args.payload as unknown as { recoveryCommitment: Codec; expiration: Codec } & Codec;
        if (!verifyPayloadSignature(owner, args.proof as Codec, payload, 'RecoveryCommitmentPayload'))
          throw new ModuleError('Msa', 'InvalidSignature');
        register(context, args.proof as Codec, numberOf(payload.expiration));
        const msaId = requireMsa(context, owner);
        const commitment = payload.recoveryCommitment.toHex();
        context.storage.set(context.state, 'Msa', 'MsaIdToRecoveryCommitment', [msaId], commitment);
        context.deposit('Msa', 'RecoveryCommitmentAdded', { who: owner, msaId, recoveryCommitment: commitment });
      },

      // On a development runtime any signed origin may approve or remove recovery providers (mainnet: governance).
      approveRecoveryProvider: (context, args) => {
        signed(context);
        const provider = requireMsa(context, account(args.providerKey));
        if (!isProvider(context, provider)) throw new ModuleError('Msa', 'ProviderNotRegistered');
        if (context.storage.has(context.state, 'Msa', 'RecoveryProviders', provider)) return;
        context.storage.set(context.state, 'Msa', 'RecoveryProviders', [provider], true);
        context.deposit('Msa', 'RecoveryProviderApproved', { providerId: provider });
      },

      removeRecoveryProvider: (context, args) => {
        signed(context);
        const provider = msaIdOf(args.provider as Codec);
        context.storage.set(context.state, 'Msa', 'RecoveryProviders', [provider], undefined);
        context.deposit('Msa', 'RecoveryProviderRemoved', { providerId: provider });
      },

      recoverAccount: (context, args) => {
        const provider = requireMsa(context, signed(context));
        if (!context.storage.has(context.state, 'Msa', 'RecoveryProviders', provider))
          throw new ModuleError('Msa', 'NotAuthorizedRecoveryProvider');
        const payload = args.addKeyPayload as unknown as {
          msaId: Codec;
          expiration: Codec;
          newPublicKey: Codec;
        } & Codec;
        const msaId = msaIdOf(payload.msaId);
        // The commitment is keccak256(a ‖ b) of the two intermediary hashes; it may be used once.
        const commitment = u8aToHex(
          keccakAsU8a(
            u8aConcat((args.intermediaryHashA as Codec).toU8a(true), (args.intermediaryHashB as Codec).toU8a(true)),
          ),
        );
        const stored = someOf(context.storage.get(context.state, 'Msa', 'MsaIdToRecoveryCommitment', msaId));
        if (stored === undefined) throw new ModuleError('Msa', 'NoRecoveryCommitment');
        if (stored.toHex() !== commitment) throw new ModuleError('Msa', 'InvalidRecoveryCommitment');
        const newKey = account(payload.newPublicKey);
        if (!verifyPayloadSignature(newKey, args.newControlKeyProof as Codec, payload, 'AddKeyData'))
          throw new ModuleError('Msa', 'NewKeyOwnershipInvalidSignature');
        register(context, args.newControlKeyProof as Codec, numberOf(payload.expiration));
        addKey(context, msaId, newKey, limits.maxPublicKeysPerMsa);
        context.deposit('Msa', 'PublicKeyAdded', { msaId, key: newKey });
        context.storage.set(context.state, 'Msa', 'MsaIdToRecoveryCommitment', [msaId], undefined);
        context.deposit('Msa', 'AccountRecovered', { msaId, recoveryProvider: provider, newControlKey: newKey });
        context.deposit('Msa', 'RecoveryCommitmentInvalidated', { msaId, recoveryCommitment: commitment });
      },

      // The MSA's tokens (held by its Ethereum address) go to the key the owner authorized; the extension has
      // checked everything else.
      withdrawTokens: (context, args) => {
        const receiver = signed(context);
        const payload = args.authorizationPayload as unknown as AuthorizedKeyData;
        register(context, args.msaOwnerProof as Codec, numberOf(payload.expiration));
        const from = msaTokenAccount(bigintOf(payload.msaId));
        const amount = spendable(readAccount(context, from), existentialDeposit, false);
        if (amount === 0n) throw new ModuleError('Msa', 'InsufficientBalanceToWithdraw');
        transfer(context, from, receiver, amount, existentialDeposit, false);
      },

      deleteMsaPublicKey: (context, args) => {
        const target = account(args.publicKeyToDelete);
        removeKey(context, requireMsa(context, target), target);
        context.deposit('Msa', 'PublicKeyDeleted', { key: target });
      },

      retireMsa: (context) => {
        const key = signed(context);
        const msaId = requireMsa(context, key);
        removeKey(context, msaId, key);
        context.deposit('Msa', 'PublicKeyDeleted', { key });
        context.deposit('Msa', 'MsaRetired', { msaId });
      },
    },

    validate: {
      revokeDelegationByDelegator: (context, args) => {
        const delegator = msaOf(context, context.signer);
        if (delegator === undefined) throw INVALID.custom(VALIDITY.invalidMsaKey);
        const delegation = readDelegation(context, delegator, msaIdOf(args.providerMsaId as Codec));
        if (!isActive(delegation, context.blockNumber)) throw INVALID.custom(VALIDITY.invalidDelegation);
      },
      revokeDelegationByProvider: (context, args) => {
        const provider = msaOf(context, context.signer);
        if (provider === undefined) throw INVALID.custom(VALIDITY.invalidMsaKey);
        const delegation = readDelegation(context, msaIdOf(args.delegator as Codec), provider);
        if (!isActive(delegation, context.blockNumber)) throw INVALID.custom(VALIDITY.invalidDelegation);
      },
      deleteMsaPublicKey: (context, args) => {
        const target = account(args.publicKeyToDelete);
        if (target === context.signer) throw INVALID.custom(VALIDITY.invalidSelfRemoval);
        const signerMsa = msaOf(context, context.signer);
        const targetMsa = msaOf(context, target);
        if (signerMsa === undefined || targetMsa === undefined) throw INVALID.custom(VALIDITY.invalidMsaKey);
        if (signerMsa !== targetMsa) throw INVALID.custom(VALIDITY.notKeyOwner);
      },
      retireMsa: (context) => validateRetirement(context),
      withdrawTokens: (context, args) => {
        const payload = args.authorizationPayload as unknown as AuthorizedKeyData;
        if (account(payload.authorizedPublicKey) !== context.signer) throw INVALID.custom(VALIDITY.notKeyOwner);
        const owner = account(args.msaOwnerPublicKey);
        const badProof = () => INVALID.custom(VALIDITY.msaOwnershipInvalidSignature);
        if (payload.discriminant.toString() !== 'AuthorizedKeyData') throw badProof();
        if (!verifyPayloadSignature(owner, args.msaOwnerProof as Codec, payload, 'AuthorizedKeyData')) throw badProof();
        if (msaOf(context, context.signer) !== undefined) throw INVALID.custom(VALIDITY.ineligibleOrigin);
        if (
          !signatureUsable(
            context,
            args.msaOwnerProof as Codec,
            numberOf(payload.expiration),
            limits.mortalityWindowSize,
          )
        )
          throw badProof();
        const msaId = bigintOf(payload.msaId);
        const ownerMsa = msaOf(context, owner);
        if (ownerMsa === undefined || BigInt(ownerMsa) !== msaId) throw INVALID.custom(VALIDITY.invalidMsaKey);
        if (spendable(readAccount(context, msaTokenAccount(msaId)), existentialDeposit, false) === 0n)
          throw INVALID.custom(VALIDITY.insufficientBalanceToWithdraw);
      },
    },
  };
}

function validateRetirement(context: ValidationContext): void {
  const msaId = msaOf(context, context.signer);
  if (msaId === undefined) throw INVALID.custom(VALIDITY.invalidMsaKey);
  if (isProvider(context, msaId)) throw INVALID.custom(VALIDITY.providerCannotBeRetired);
  if (context.storage.has(context.state, 'Handles', 'MSAIdToDisplayName', msaId))
    throw INVALID.custom(VALIDITY.handleNotRetired);
  if (keyCount(context, msaId) !== 1) throw INVALID.custom(VALIDITY.moreThanOneKey);
  if (hasActiveDelegations(context, msaId, context.blockNumber)) throw INVALID.custom(VALIDITY.activeDelegations);
  // Tokens sent to the MSA's own Ethereum address would be lost with it.
  if (readAccount(context, msaTokenAccount(BigInt(msaId))).data.free > 0n)
    throw INVALID.custom(VALIDITY.msaHoldsTokens);
}
