import { readFileSync } from 'node:fs';
import { Keyring } from '@polkadot/keyring';
import { hexToU8a, isHex, stringToU8a, u8aToHex } from '@polkadot/util';
import { cryptoWaitReady, decodeAddress, mnemonicValidate } from '@polkadot/util-crypto';
import { z } from 'zod';
import { ethereumAccountId } from '@frequency-gateway/chain';
import { stake, type CapacityConstants } from '../pallets/capacity/index.js';
import { claimHandle, type HandlesLimits } from '../pallets/handles/index.js';
import { createMsa, isProvider, registerProvider } from '../pallets/msa/accounts.js';
import { addDelegation } from '../pallets/msa/delegations.js';
import { nameKey } from '../pallets/schemas/info.js';
import { parseSchemaName } from '../pallets/schemas/names.js';
import type { AccountHex, BlockHookContext, PalletRuntime } from '../runtime/context.js';
import { ModuleError } from '../runtime/errors.js';

const planck = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));

/** An sr25519 secret URI (`//Dave`, a mnemonic), an SS58 address, 32 bytes of hex, or a 20-byte Ethereum address. */
const account = z.string().min(1);

const schema = z
  .object({
    providers: z
      .array(
        z
          .object({
            account,
            name: z.string().min(1).max(256),
            /** Planck to stake for Capacity (default: none). */
            stake: planck.optional(),
            /** Free balance at genesis (default: the dev accounts' endowment). */
            balance: planck.optional(),
          })
          .strict(),
      )
      .default([]),
    users: z
      .array(
        z
          .object({
            account,
            balance: planck.optional(),
            handle: z.string().min(1).optional(),
            delegations: z
              .array(
                z
                  .object({
                    provider: z.number().int().positive(),
                    /** Intent ids, or names such as "dsnp.broadcast" (resolved against the genesis intents). */
                    intents: z.array(z.union([z.number().int().positive(), z.string().min(1)])),
                  })
                  .strict(),
              )
              .default([]),
          })
          .strict(),
      )
      .default([]),
  })
  .strict();

export type ExtraGenesisInput = z.input<typeof schema>;

export interface ResolvedAccount {
  account: AccountHex;
  balance?: bigint;
}

export interface ExtraGenesis {
  providers: (ResolvedAccount & { name: string; stake?: bigint })[];
  users: (ResolvedAccount & { handle?: string; delegations: { provider: number; intents: (number | string)[] }[] })[];
}

export class GenesisFileError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid genesis: ${problems.join('; ')}`);
    this.name = 'GenesisFileError';
  }
}

async function resolveAccount(text: string, path: string): Promise<AccountHex> {
  if (isHex(text, 160)) return u8aToHex(ethereumAccountId(hexToU8a(text))) as AccountHex;
  if (isHex(text, 256)) return text.toLowerCase() as AccountHex;
  const phrase = text.split('/')[0]?.trim() ?? '';
  if (text.startsWith('/') || (phrase.includes(' ') && mnemonicValidate(phrase))) {
    await cryptoWaitReady();
    return u8aToHex(new Keyring({ type: 'sr25519' }).addFromUri(text).publicKey) as AccountHex;
  }
  try {
    return u8aToHex(decodeAddress(text)) as AccountHex;
  } catch {
    throw new GenesisFileError([`${path}: "${text}" is not a secret URI, an SS58 address or a hex account id`]);
  }
}

/** Validates an extra-genesis document (users, delegations, handles, providers), naming every problem. */
export async function parseExtraGenesis(input: unknown): Promise<ExtraGenesis> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    throw new GenesisFileError(
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
    );
  }
  const providers = await Promise.all(
    parsed.data.providers.map(async (p, i) => ({
      ...p,
      account: await resolveAccount(p.account, `providers.${i}.account`),
    })),
  );
  const users = await Promise.all(
    parsed.data.users.map(async (u, i) => ({ ...u, account: await resolveAccount(u.account, `users.${i}.account`) })),
  );
  return { providers, users } as ExtraGenesis;
}

export async function readExtraGenesis(path: string): Promise<ExtraGenesis> {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new GenesisFileError([`${path}: ${(error as Error).message}`]);
  }
  return parseExtraGenesis(document);
}

/** An intent id as given, or the id of the intent registered under a name. */
function intentIdOf(context: BlockHookContext, intent: number | string, path: string): number {
  if (typeof intent === 'number') return intent;
  const { namespace, descriptor } = parseSchemaName(stringToU8a(intent), true);
  const key = nameKey(namespace, descriptor as string);
  const entity = context.storage.has(context.state, 'Schemas', 'NameToMappedEntityIds', ...key)
    ? (context.storage.get(context.state, 'Schemas', 'NameToMappedEntityIds', ...key) as unknown as {
        isIntent: boolean;
        asIntent: { toNumber(): number };
      })
    : undefined;
  if (!entity?.isIntent) throw new GenesisFileError([`${path}: "${intent}" is not a registered intent`]);
  return entity.asIntent.toNumber();
}

export interface ExtraGenesisConfig {
  maxKeys: number;
  maxGrantsPerDelegation: number;
  maxProviderNameSize: number;
  capacity: CapacityConstants;
  handles: HandlesLimits;
}

/**
 * Writes the extra genesis after the development one: providers (MSA, registry entry, stake), then users
 * (MSA, delegations, handle). A rule the runtime would enforce that the document breaks stops the start.
 */
export function extraGenesis(extra: ExtraGenesis, config: ExtraGenesisConfig): PalletRuntime {
  const at = (what: string, run: () => void) => {
    try {
      run();
    } catch (error) {
      if (error instanceof ModuleError) throw new GenesisFileError([`${what}: ${error.message}`]);
      throw error;
    }
  };
  return {
    name: 'ExtraGenesis',
    genesis: (context: BlockHookContext) => {
      extra.providers.forEach((provider, i) =>
        at(`providers.${i}`, () => {
          const msaId = createMsa(context, provider.account, config.maxKeys);
          const entry = {
            defaultName: provider.name,
            localizedNames: new Map(),
            defaultLogo250100PngCid: '',
            localizedLogo250100PngCids: new Map(),
          };
          registerProvider(context, msaId, entry, stringToU8a(provider.name).length, config.maxProviderNameSize);
          if (provider.stake) stake(context, provider.account, msaId, provider.stake, config.capacity);
        }),
      );
      extra.users.forEach((user, i) =>
        at(`users.${i}`, () => {
          const msaId = createMsa(context, user.account, config.maxKeys);
          for (const delegation of user.delegations) {
            if (!isProvider(context, delegation.provider))
              throw new GenesisFileError([`users.${i}: MSA ${delegation.provider} is not a registered provider`]);
            const intents = delegation.intents.map((intent) => intentIdOf(context, intent, `users.${i}`));
            addDelegation(context, msaId, delegation.provider, intents, config.maxGrantsPerDelegation);
          }
          if (user.handle) claimHandle(context, config.handles, msaId, stringToU8a(user.handle), 0);
        }),
      );
    },
  };
}
