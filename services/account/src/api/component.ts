import { chainCheck, chainUnreachable, chainVariables, openChain, SchemaDirectory } from '@frequency-gateway/chain';
import {
  apiVariables,
  commonVariables,
  Intake,
  intakeStream,
  intakeDurability,
  intakeVariables,
  openRedis,
  requestStatusRoutes,
  requestStatusVariables,
  secret,
  variable,
  type ComponentDefinition,
} from '@frequency-gateway/platform';
import { z } from 'zod';
import { transactionNotifyWebhook } from '../notifications.js';
import { ACCOUNT_JOB_OPTIONS, ACCOUNT_QUEUES } from '../queues.js';
import { accountRequests } from '../requests.js';
import { version } from '../version.js';
import { accountRoutes } from './accountRoutes.js';
import { delegationRoutes } from './delegationRoutes.js';
import { handleRoutes } from './handleRoutes.js';
import { icsRoutes } from './icsRoutes.js';
import { keyAgreementRoutes } from './keyAgreementRoutes.js';
import { keyRoutes } from './keyRoutes.js';
import { LoginNonces } from './loginNonces.js';
import { SiwfService } from './siwf.js';
import { siwfRoutes } from './siwfRoutes.js';
import { retirementRoutes } from './userTransactionRoutes.js';

/** One URI, a comma-separated list, or a JSON array of them. */
const uriList = z
  .string()
  .optional()
  .transform((text, context) => {
    if (text === undefined || text.trim() === '') return undefined;
    const items = text.trim().startsWith('[') ? (JSON.parse(text) as unknown) : text.split(',');
    if (!Array.isArray(items) || items.some((item) => typeof item !== 'string' || item.trim() === '')) {
      context.addIssue({ code: 'custom', message: 'must be URIs separated by commas, or a JSON array of URIs' });
      return z.NEVER;
    }
    return items.map((item: string) => item.trim());
  });

export const accountApiConfig = {
  ...commonVariables({ cacheKeyPrefix: 'account' }),
  ...apiVariables({ port: 3013 }),
  ...intakeVariables(),
  ...chainVariables(),
  PROVIDER_ACCOUNT_SEED_PHRASE: secret(
    z.string().optional(),
    'Key of the provider, to sign sign-in requests; unset: read-only (sign-in requests and sign-ups are refused)',
    '//Alice',
  ),
  SIWF_V2_URL: variable(
    z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    'The Sign In With Frequency service (its /start page and /api/payload code exchange); unset: Frequency Access of the chain (mainnet or testnet)',
    { example: 'https://testnet.frequencyaccess.com/siwa' },
  ),
  SIWF_NODE_RPC_URL: variable(
    z.url({ protocol: /^(wss?|https?)$/, error: 'must be a ws(s):// or http(s):// URL' }).optional(),
    "The Frequency node the user's browser connects to during sign-in; unset: the first node of FREQUENCY_API_WS_URL",
    { example: 'wss://0.rpc.testnet.amplica.io' },
  ),
  SIWF_V2_URI_VALIDATION: variable(
    uriList,
    'URIs a login message may come from (its URI: line; scheme and path checked when given, port ignored), comma-separated or a JSON array; unset: sign-in is refused',
    { example: 'https://app.example.com,localhost' },
  ),
  SIWF_CODE_TIMEOUT_MS: variable(
    z.coerce.number().int().min(100).max(120_000).default(10_000),
    'Longest wait for the SIWF service to exchange an authorizationCode',
  ),
  ...requestStatusVariables(),
};

/** How long a route waits for a chain that is still connecting before answering 503. */
const CHAIN_WAIT_MS = 5_000;

export const accountApi: ComponentDefinition<typeof accountApiConfig> = {
  name: 'account-api',
  title: 'Account Service',
  description:
    'Sign In With Frequency registration and login, account look-ups and transaction webhooks. A sign-up is asynchronous: its signUpReferenceId is followed at GET /v1/requests/{referenceId} (or its event stream) and its outcome is POSTed to the application (see webhooks).',
  version,
  config: accountApiConfig,
  portVariable: 'API_PORT',
  setup: ({ config, queues, readiness, metrics, logger, shutdown, redisEndpoint }) => {
    const chain = openChain({ url: config.FREQUENCY_API_WS_URL, logger, metrics });
    readiness.add(chainCheck(chain));
    for (const name of Object.values(ACCOUNT_QUEUES)) queues.queue(name);

    // Requests are answered at once while Redis is away (503), not held until it returns.
    const redis = openRedis(redisEndpoint, 'failFast');
    const status = accountRequests.store(redis, config.CACHE_KEY_PREFIX, config.REQUEST_STATUS_TTL_SECONDS);
    const intake = new Intake(status, logger, metrics, {
      service: accountRequests.intake,
      stream: intakeStream(config.CACHE_KEY_PREFIX, accountRequests.intake),
      jobOptions: ACCOUNT_JOB_OPTIONS.transactionPublish,
      ...intakeDurability(config),
    });
    const directory = new SchemaDirectory(chain, { readyTimeoutMs: CHAIN_WAIT_MS, intentTtlMs: 60_000 });
    const nonces = new LoginNonces(redis, config.CACHE_KEY_PREFIX, logger);
    // The SIWF service's URL is the operator's (SIWF_V2_URL), not a client's: plain fetch, no outbound policy.
    const siwf = new SiwfService(chain, directory, nonces, fetch, {
      providerId: config.PROVIDER_ID,
      providerSeed: config.PROVIDER_ACCOUNT_SEED_PHRASE || undefined,
      siwfUrl: config.SIWF_V2_URL,
      nodeRpcUrl: config.SIWF_NODE_RPC_URL ?? (config.FREQUENCY_API_WS_URL[0] as string),
      loginUris: config.SIWF_V2_URI_VALIDATION,
      codeTimeoutMs: config.SIWF_CODE_TIMEOUT_MS,
      chainWaitMs: CHAIN_WAIT_MS,
    });
    if (siwf.readOnly)
      logger.warn('no PROVIDER_ACCOUNT_SEED_PHRASE: read-only, sign-in requests and sign-ups are refused');

    const writes = {
      chain,
      intake,
      providerId: config.PROVIDER_ID.toString(),
      readOnly: siwf.readOnly,
      chainWaitMs: CHAIN_WAIT_MS,
    };
    return {
      routes: [
        ...siwfRoutes({ siwf, intake, providerId: config.PROVIDER_ID.toString() }),
        ...accountRoutes(chain, CHAIN_WAIT_MS),
        ...handleRoutes(writes),
        ...keyRoutes(writes),
        ...keyAgreementRoutes({ ...writes, directory }),
        ...delegationRoutes(writes),
        ...retirementRoutes(writes),
        ...icsRoutes(writes),
        ...requestStatusRoutes({ store: status, recordSchema: accountRequests.recordSchema, signal: shutdown.signal }),
      ],
      webhooks: [transactionNotifyWebhook],
      queueBoard: true,
      // A route that needed the chain while it was away answers 503 saying so.
      dependencyFailure: chainUnreachable,
      stop: async () => {
        status.close();
        await chain.close();
        redis.disconnect();
      },
    };
  },
};
