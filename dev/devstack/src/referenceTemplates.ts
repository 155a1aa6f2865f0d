/**
 * The settings of the reference gateway's three env templates (`env-files/<service>.template.env` of
 * ProjectLibertyLabs/gateway), each with the example value the template gives it: what an operator switching to
 * this gateway brings. `filledReferenceTemplate` points one at a local stack.
 */
export type ReferenceService = 'account' | 'content-publishing' | 'content-watcher';

const CHAIN = {
  FREQUENCY_API_WS_URL: 'ws://0.0.0.0:9944',
  FREQUENCY_TIMEOUT_SECS: '10',
  PROVIDER_ID: '1',
  REDIS_URL: 'redis://0.0.0.0:6379?commandTimeout=10000',
};

const HTTP = {
  API_PORT: '3000',
  API_TIMEOUT_MS: '30000',
  API_BODY_JSON_LIMIT: '1mb',
  HTTP_RESPONSE_TIMEOUT_MS: '3000',
  LOG_LEVEL: 'debug',
  PRETTY: 'true',
  RATE_LIMIT_TTL: '60000',
  RATE_LIMIT_MAX_REQUESTS: '100',
  RATE_LIMIT_SKIP_SUCCESS: 'false',
  RATE_LIMIT_SKIP_FAILED: 'false',
  RATE_LIMIT_BLOCK_ON_EXCEEDED: 'true',
};

export const REFERENCE_TEMPLATES: Record<ReferenceService, Readonly<Record<string, string>>> = {
  account: {
    ...CHAIN,
    ...HTTP,
    WORKER_API_PORT: '3000',
    SIWF_NODE_RPC_URL: 'http://0.0.0.0:9944',
    ACCOUNT_WEBHOOK_PORT: '3001',
    WEBHOOK_BASE_URL: 'http://host.docker.internal:3001/webhooks/account-service',
    BLOCKCHAIN_SCAN_INTERVAL_SECONDS: '3',
    TRUST_UNFINALIZED_BLOCKS: 'true',
    PROVIDER_ACCESS_TOKEN: 'some-token',
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    WEBHOOK_FAILURE_THRESHOLD: '3',
    WEBHOOK_RETRY_INTERVAL_SECONDS: '10',
    HEALTH_CHECK_MAX_RETRIES: '4',
    HEALTH_CHECK_MAX_RETRY_INTERVAL_SECONDS: '10',
    HEALTH_CHECK_SUCCESS_THRESHOLD: '10',
    CAPACITY_LIMIT: '{"serviceLimit":{"type":"percentage","value":"80"}}',
    SIWF_URL: 'https://ProjectLibertyLabs.github.io/siwf/v1/ui',
    SIWF_V2_URI_VALIDATION: 'https://testnet.frequencyaccess.com',
    CACHE_KEY_PREFIX: 'account:',
    RATE_LIMIT_KEY_PREFIX: 'account:throttle',
  },
  'content-publishing': {
    ...CHAIN,
    ...HTTP,
    WORKER_API_PORT: '3000',
    BLOCKCHAIN_SCAN_INTERVAL_SECONDS: '6',
    TRUST_UNFINALIZED_BLOCKS: 'false',
    IPFS_ENDPOINT: 'http://127.0.0.1:5001/api/v0',
    IPFS_BASIC_AUTH_SECRET: '',
    IPFS_GATEWAY_URL: 'http://127.0.0.1:8080/ipfs/[CID]',
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    CAPACITY_LIMIT: '{"serviceLimit":{"type":"percentage","value":"80"}}',
    FILE_UPLOAD_MAX_SIZE_IN_BYTES: '500000000',
    FILE_UPLOAD_COUNT_LIMIT: '10',
    ASSET_EXPIRATION_INTERVAL_SECONDS: '300',
    BATCH_INTERVAL_SECONDS: '6',
    BATCH_MAX_COUNT: '1000',
    ASSET_UPLOAD_VERIFICATION_DELAY_SECONDS: '5',
    WEBHOOK_BASE_URL: 'http://host.docker.internal:3001/webhooks/content-pubishing-service',
    CACHE_KEY_PREFIX: 'content-publishing:',
    RATE_LIMIT_KEY_PREFIX: 'content-publishing:throttle',
  },
  'content-watcher': {
    ...CHAIN,
    ...HTTP,
    IPFS_ENDPOINT: 'http://127.0.0.1:5001',
    IPFS_GATEWAY_URL: 'http://127.0.0.1:8080/ipfs/[CID]',
    BLOCKCHAIN_SCAN_INTERVAL_SECONDS: '6',
    QUEUE_HIGH_WATER: '1000',
    WEBHOOK_FAILURE_THRESHOLD: '4',
    WEBHOOK_RETRY_INTERVAL_SECONDS: '10',
    WEBHOOK_BASE_URL: 'http://host.docker.internal:3001/webhooks/content-publishing-service',
    CACHE_KEY_PREFIX: 'content-watcher:',
    RATE_LIMIT_KEY_PREFIX: 'content-watcher:throttle',
  },
};

/** Where a local stack's services are, for `filledReferenceTemplate`. */
export interface LocalAddresses {
  /** The chain node's WebSocket URL (its HTTP RPC is the same host and port). */
  chainUrl: string;
  /** The stack's Redis, `redis://host:port`. */
  redisUrl: string;
  /** Kubo's RPC API, `http://host:port`. */
  ipfsApiUrl: string;
  /** Kubo's HTTP gateway, `http://host:port`. */
  ipfsGatewayUrl: string;
  /** Where the service's webhooks go. */
  webhookBaseUrl: string;
  /** The login URI the SIWF sign-ups of the run use. */
  loginUri: string;
}

/**
 * A reference template as an operator fills it for a stack: every address points at `addresses` (the paths and
 * query the template gives are kept, e.g. `/api/v0` and `?commandTimeout=10000`), the ports are left out (the
 * process starter chooses free ones), every other setting is the template's.
 */
export function filledReferenceTemplate(service: ReferenceService, addresses: LocalAddresses): Record<string, string> {
  const template = REFERENCE_TEMPLATES[service];
  const moved = (url: string, to: string) => {
    const target = new URL(to);
    const from = new URL(url);
    from.protocol = target.protocol;
    from.host = target.host;
    return from.toString().replace(/\/$/, '');
  };
  const filled: Record<string, string> = {};
  for (const [name, value] of Object.entries(template)) {
    if (name === 'API_PORT' || name === 'WORKER_API_PORT') continue;
    filled[name] = value;
  }
  filled.FREQUENCY_API_WS_URL = addresses.chainUrl;
  filled.REDIS_URL = moved(template.REDIS_URL!, addresses.redisUrl);
  filled.WEBHOOK_BASE_URL = addresses.webhookBaseUrl;
  if ('SIWF_NODE_RPC_URL' in template) filled.SIWF_NODE_RPC_URL = addresses.chainUrl.replace(/^ws/, 'http');
  if ('SIWF_V2_URI_VALIDATION' in template) filled.SIWF_V2_URI_VALIDATION = addresses.loginUri;
  if ('IPFS_ENDPOINT' in template) filled.IPFS_ENDPOINT = moved(template.IPFS_ENDPOINT!, addresses.ipfsApiUrl);
  if ('IPFS_GATEWAY_URL' in template) filled.IPFS_GATEWAY_URL = `${addresses.ipfsGatewayUrl}/ipfs/[CID]`;
  return filled;
}
