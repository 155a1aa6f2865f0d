// The reference gateway's three env templates (env-files/<service>.template.env, their settings and example
// values) read by this gateway's components: every setting is taken with the same meaning, carried over, or
// refused at start naming what to use instead; none is ignored without a word.
import { readConfig, REFERENCE_NAMES, type ConfigError } from '@frequency-gateway/platform';
import { COMPONENTS } from '../src/components.js';

const CHAIN = { FREQUENCY_API_WS_URL: 'ws://127.0.0.1:9944', FREQUENCY_TIMEOUT_SECS: '10', PROVIDER_ID: '1' };
const HTTP = {
  API_PORT: '3000',
  CACHE_KEY_PREFIX: '',
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
  RATE_LIMIT_KEY_PREFIX: 'x:throttle',
};

/** The templates' settings, with their example values (loopback addresses for the local stack). */
const TEMPLATES: Record<string, Record<string, string>> = {
  account: {
    ...CHAIN,
    ...HTTP,
    CACHE_KEY_PREFIX: 'account:',
    RATE_LIMIT_KEY_PREFIX: 'account:throttle',
    WORKER_API_PORT: '3001',
    SIWF_NODE_RPC_URL: 'http://127.0.0.1:9944',
    ACCOUNT_WEBHOOK_PORT: '3001',
    WEBHOOK_BASE_URL: 'http://127.0.0.1:3001/webhooks/account-service',
    REDIS_URL: 'redis://127.0.0.1:6379',
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
  },
  'content-publishing': {
    ...CHAIN,
    ...HTTP,
    CACHE_KEY_PREFIX: 'content-publishing:',
    RATE_LIMIT_KEY_PREFIX: 'content-publishing:throttle',
    BLOCKCHAIN_SCAN_INTERVAL_SECONDS: '6',
    TRUST_UNFINALIZED_BLOCKS: 'false',
    IPFS_ENDPOINT: 'http://127.0.0.1:5001',
    IPFS_BASIC_AUTH_SECRET: '',
    IPFS_GATEWAY_URL: 'http://127.0.0.1:8080/ipfs/[CID]',
    REDIS_URL: 'redis://127.0.0.1:6379',
    PROVIDER_ACCOUNT_SEED_PHRASE: '//Alice',
    CAPACITY_LIMIT: '{"type":"percentage", "value":80}',
    WORKER_API_PORT: '3001',
    FILE_UPLOAD_MAX_SIZE_IN_BYTES: '500000000',
    FILE_UPLOAD_COUNT_LIMIT: '10',
    ASSET_EXPIRATION_INTERVAL_SECONDS: '300',
    BATCH_INTERVAL_SECONDS: '12',
    BATCH_MAX_COUNT: '1000',
    ASSET_UPLOAD_VERIFICATION_DELAY_SECONDS: '5',
    WEBHOOK_BASE_URL: 'http://127.0.0.1:3001/webhooks/content-publishing',
  },
  'content-watcher': {
    ...CHAIN,
    ...HTTP,
    CACHE_KEY_PREFIX: 'content-watcher:',
    RATE_LIMIT_KEY_PREFIX: 'content-watcher:throttle',
    IPFS_ENDPOINT: 'http://127.0.0.1:5001',
    IPFS_GATEWAY_URL: 'http://127.0.0.1:8080/ipfs/[CID]',
    REDIS_URL: 'redis://127.0.0.1:6379',
    BLOCKCHAIN_SCAN_INTERVAL_SECONDS: '6',
    QUEUE_HIGH_WATER: '1000',
    WEBHOOK_FAILURE_THRESHOLD: '4',
    WEBHOOK_RETRY_INTERVAL_SECONDS: '10',
    WEBHOOK_BASE_URL: 'http://127.0.0.1:3001/webhooks/content-watcher',
  },
};

const REFUSED = new Set(
  Object.entries(REFERENCE_NAMES)
    .filter(([, rule]) => rule.kind === 'refused')
    .map(([name]) => name),
);

describe.each(Object.entries(TEMPLATES))("the reference's %s template", (service, template) => {
  const components = COMPONENTS.filter((component) => component.service === service);
  const serviceVariables = components.flatMap((component) => Object.keys(component.config));

  it('has no setting this gateway neither reads nor names', () => {
    const unaccounted = Object.keys(template).filter(
      (name) => !serviceVariables.includes(name) && !(name in REFERENCE_NAMES),
    );
    expect(unaccounted).toEqual([]);
  });

  it.each(components.map((component) => [component.name, component] as const))(
    '%s refuses to start on it, naming each setting it does not support and what to use instead',
    (_name, component) => {
      let problems: readonly string[] = [];
      try {
        readConfig(component.config, template, component.name, serviceVariables);
      } catch (error) {
        problems = (error as ConfigError).problems;
      }
      const named = problems.map((problem) => problem.split(' ')[0]);
      const expected = Object.keys(template).filter((name) => REFUSED.has(name));
      expect(named.sort()).toEqual(expected.sort());
      for (const problem of problems) expect(problem).toMatch(/: not supported: .{20,}/);
    },
  );

  it.each(components.map((component) => [component.name, component] as const))(
    '%s starts on it once the refused settings are removed, honouring the renamed ones, and warns of the inert ones',
    (_name, component) => {
      const kept = Object.fromEntries(Object.entries(template).filter(([name]) => !REFUSED.has(name)));
      const { config, notices } = readConfig(component.config, kept, component.name, serviceVariables);
      const has = (name: string) => name in component.config;
      const settings = config as Record<string, unknown>;
      expect(settings.CACHE_KEY_PREFIX).toBe(`{${service}}`);
      expect(settings.LOG_LEVEL).toBe('debug');
      expect(settings.LOG_PRETTY).toBe(true);
      if (has('HTTP_JSON_LIMIT')) expect(settings.HTTP_JSON_LIMIT).toBe('1mb');
      if (has('RATE_LIMIT_PER_MINUTE')) expect(settings.RATE_LIMIT_PER_MINUTE).toBe(100);
      if (has('WEBHOOK_TIMEOUT_MS')) expect(settings.WEBHOOK_TIMEOUT_MS).toBe(3000);
      if (has('SIWF_CODE_TIMEOUT_MS')) expect(settings.SIWF_CODE_TIMEOUT_MS).toBe(3000);
      if (has('WEBHOOK_MAX_ATTEMPTS') && template.WEBHOOK_FAILURE_THRESHOLD)
        expect(settings.WEBHOOK_MAX_ATTEMPTS).toBe(Number(template.WEBHOOK_FAILURE_THRESHOLD));
      if (has('WEBHOOK_RETRY_BASE_MS') && template.WEBHOOK_RETRY_INTERVAL_SECONDS)
        expect([settings.WEBHOOK_RETRY_BASE_MS, settings.WEBHOOK_RETRY_MAX_MS]).toEqual([10_000, 10_000]);
      if (has('WEBHOOK_BEARER_TOKEN') && template.PROVIDER_ACCESS_TOKEN)
        expect(settings.WEBHOOK_BEARER_TOKEN).toBe(template.PROVIDER_ACCESS_TOKEN);
      const inert = Object.keys(template).filter(
        (name) => REFERENCE_NAMES[name]?.kind === 'inert' && !serviceVariables.includes(name),
      );
      expect(notices.map((notice) => notice.split(' ')[0]).sort()).toEqual(inert.sort());
    },
  );
});
