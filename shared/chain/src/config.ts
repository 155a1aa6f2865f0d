import {
  integerInRange,
  positiveMs,
  redactUrl,
  secret,
  variable,
  type ReadinessCheck,
} from '@frequency-gateway/platform';
import { z } from 'zod';
import { parseCapacityLimit } from './capacity.js';
import type { OpeningChain } from './connection.js';
import { ChainTiming } from './timing.js';

const MAX_U64 = 2n ** 64n - 1n;

/** An MSA id from text: decimal, no leading zeros, 1 to 2^64 − 1. */
export const msaIdText = () =>
  z
    .string()
    .superRefine((text, context) => {
      if (!/^[1-9]\d{0,19}$/.test(text)) context.addIssue({ code: 'custom', message: 'must be a positive integer' });
      else if (BigInt(text) > MAX_U64) context.addIssue({ code: 'custom', message: 'must be below 2^64' });
    })
    .transform((text) => BigInt(text));

/** A comma-separated list of ws:// or wss:// URLs, each named by its position when refused. */
export const nodeUrls = () =>
  z.string().transform((text, context) => {
    const entries = text.split(',').map((entry) => entry.trim());
    entries.forEach((entry, index) => {
      const at = `entry ${index + 1}`;
      if (entry === '') context.addIssue({ code: 'custom', message: `${at} is empty` });
      else if (!/^wss?:\/\/[^/\s]/.test(entry) || !URL.canParse(entry))
        context.addIssue({ code: 'custom', message: `${at} (${redactUrl(entry)}) must be a ws:// or wss:// URL` });
      else if (entries.indexOf(entry) !== index)
        context.addIssue({
          code: 'custom',
          message: `${at} (${redactUrl(entry)}) repeats entry ${entries.indexOf(entry) + 1}`,
        });
    });
    return entries;
  });

/**
 * The chain variables of a component. Workers sign, so they need the seed phrase; apis only read and check
 * delegations to the provider, so for them it is not asked for at all.
 */
export function chainVariables() {
  return {
    FREQUENCY_API_WS_URL: variable(
      nodeUrls(),
      'WebSocket RPC endpoints of Frequency nodes, comma-separated: the components use one and move to the next when it fails (closes, stops answering or its subscriptions go silent); every node must serve the same chain',
      { urlWithCredentials: true, example: 'ws://frequency-0:9944,ws://frequency-1:9944' },
    ),
    PROVIDER_ID: variable(msaIdText(), 'MSA id of the provider this gateway acts for', { example: '1' }),
  };
}

/** The signing key of a worker, with the chain variables. */
export function signingChainVariables() {
  return {
    ...chainVariables(),
    PROVIDER_ACCOUNT_SEED_PHRASE: secret(
      z.string().min(1),
      'Key of the provider: an sr25519 mnemonic or secret URI (//Alice on a dev chain), or a 0x Ethereum private key',
      '//Alice',
    ),
  };
}

/** The readiness check of a chain connection (required: nothing is read or published without it). */
export function chainCheck(chain: OpeningChain): ReadinessCheck {
  return {
    name: 'chain',
    // The node in use: it changes when the connection moves to the next node.
    get target() {
      return chain.target;
    },
    probe: (signal) => chain.probe(signal),
  };
}

/** The variables of a component that submits capacity transactions and follows their outcomes. */
export function submissionVariables() {
  return {
    CAPACITY_LIMIT: variable(
      z
        .string()
        .default('{"type":"percentage","value":100}')
        .transform((text, context) => {
          try {
            return parseCapacityLimit(text);
          } catch (error) {
            context.addIssue({ code: 'custom', message: (error as Error).message });
            return z.NEVER;
          }
        }),
      'Capacity this service may spend per epoch: {"type":"percentage"|"amount","value":n}, or {"serviceLimit":…,"totalLimit":…}',
      { example: '{"type":"percentage","value":80}' },
    ),
    TRUST_UNFINALIZED_BLOCKS: variable(
      z
        .enum(['true', 'false'])
        .default('false')
        .transform((value) => value === 'true'),
      'Settle outcomes from best blocks instead of finalized ones: faster; an outcome from a best block a reorganisation retracts is settled again from the chain that replaced it, and what was told of it stays told',
    ),
    ...timingVariables(),
  };
}

const { eraPeriod, jobLockMs, recordWithinMs, stalledCheckMs } = ChainTiming.DEFAULT;

/** The durations of the timing contract an operator may tune (see ChainTiming; the others are fixed). */
function timingVariables() {
  return {
    TRANSACTION_ERA_BLOCKS: variable(
      integerInRange(4, 65_536, eraPeriod),
      'Mortal era of the transactions the worker signs, in blocks, a power of two: one not in a block by then expires. In time (times the block time) it must outlast the nonce-gap refill plus the resubmission age (the timing contract, docs/architecture.md)',
    ),
    SIGNING_JOB_LOCK_MS: variable(
      positiveMs(jobLockMs),
      `Lock of a job that signs transactions: a run that has not renewed it for this long (a frozen or starved worker) is run again by another worker. At least twice the record deadline (${recordWithinMs / 1000} s)`,
    ),
    SIGNING_JOB_STALLED_CHECK_MS: variable(
      positiveMs(stalledCheckMs),
      'How often a worker looks for signing jobs whose lock lapsed; at most SIGNING_JOB_LOCK_MS',
    ),
  };
}

/** The timing contract of a submitting worker's configuration; throws ChainTimingError when it is inconsistent. */
export function chainTiming(config: {
  TRANSACTION_ERA_BLOCKS: number;
  SIGNING_JOB_LOCK_MS: number;
  SIGNING_JOB_STALLED_CHECK_MS: number;
}): ChainTiming {
  return new ChainTiming({
    eraPeriod: config.TRANSACTION_ERA_BLOCKS,
    jobLockMs: config.SIGNING_JOB_LOCK_MS,
    stalledCheckMs: config.SIGNING_JOB_STALLED_CHECK_MS,
  });
}
