import { z } from 'zod';
import {
  ConfigError,
  parseConfig,
  readConfig,
  redactConfig,
  secret,
  secretValues,
  variable,
  port,
  renderVariableTable,
} from '../src/index.js';
import { testConfig } from './support/testComponent.js';

describe('configuration', () => {
  const spec = {
    API_PORT: variable(port(3000), 'port'),
    LOG_LEVEL: variable(z.enum(['info', 'debug']).default('info'), 'level'),
    REDIS_URL: variable(z.url(), 'redis', { urlWithCredentials: true }),
    SEED: secret(z.string().min(10), 'seed phrase'),
  };

  it('reports every invalid variable at once', () => {
    const env = { API_PORT: 'abc', LOG_LEVEL: 'loud', REDIS_URL: 'not a url', SEED: 'a long enough secret' };
    let caught: unknown;
    try {
      parseConfig(spec, env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const problems = (caught as ConfigError).problems;
    expect(problems).toHaveLength(3);
    expect(problems.map((p) => p.split(':')[0])).toEqual(['API_PORT', 'LOG_LEVEL', 'REDIS_URL']);
    expect(problems.join('\n')).not.toContain('is required');
  });

  it('names missing required variables and never echoes a secret value', () => {
    const error = (() => {
      try {
        parseConfig(spec, { SEED: 'short' });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    expect(error.problems).toContain('REDIS_URL: is required');
    expect(error.message).toContain('SEED');
    expect(error.message).not.toContain('short');
  });

  it('treats empty strings as unset and applies defaults', () => {
    const config = parseConfig(spec, { API_PORT: '', REDIS_URL: 'redis://localhost', SEED: 'abandon abandon art' });
    expect(config.API_PORT).toBe(3000);
    expect(config.LOG_LEVEL).toBe('info');
  });

  it('redacts secrets and URL credentials for display', () => {
    const config = parseConfig(spec, { REDIS_URL: 'redis://user:pa55word@redis:6379/1', SEED: 'abandon abandon art' });
    const shown = JSON.stringify(redactConfig(spec, config));
    expect(shown).not.toContain('pa55word');
    expect(shown).not.toContain('abandon');
    expect(shown).toContain('redis:6379');
    expect(secretValues(spec, config)).toEqual(expect.arrayContaining(['pa55word', 'abandon abandon art']));
  });

  it('redacts the credentials of each URL of a list', () => {
    const listSpec = {
      NODES: variable(
        z.string().transform((text) => text.split(',')),
        'nodes',
        { urlWithCredentials: true },
      ),
    };
    const config = parseConfig(listSpec, { NODES: 'wss://user:s3cret-one@node-1:9944,wss://node-2:9944' });
    const shown = JSON.stringify(redactConfig(listSpec, config));
    expect(shown).not.toContain('s3cret-one');
    expect(shown).toContain('node-1:9944');
    expect(shown).toContain('node-2:9944');
    expect(secretValues(listSpec, config)).toContain('s3cret-one');
  });

  it('documents every variable with its default and marks secrets', () => {
    const table = renderVariableTable(testConfig);
    for (const name of Object.keys(testConfig)) expect(table).toContain(`\`${name}\``);
    expect(table).toMatch(/\| `QUEUES_BASIC_AUTH` \|.*\*\(secret\)\*/);
    expect(table).toMatch(/\| `REDIS_URL` \| URL \| \*\*required\*\*/);
    expect(table).toMatch(/\| `LOG_LEVEL` \|.*\| `info` \|/);
  });
});

describe("the reference gateway's settings", () => {
  const spec = {
    HTTP_JSON_LIMIT: variable(z.string().default('1mb'), 'body limit'),
    RATE_LIMIT_PER_MINUTE: variable(z.coerce.number().int().min(0).default(0), 'rate'),
    LOG_PRETTY: variable(z.stringbool().default(false), 'pretty'),
    REDIS_URL: variable(z.url(), 'redis'),
  };
  const base = { REDIS_URL: 'redis://127.0.0.1:6379' };
  const problemsOf = (env: Record<string, string>) => {
    try {
      readConfig(spec, { ...base, ...env });
      return [];
    } catch (error) {
      return [...(error as ConfigError).problems];
    }
  };

  it('carries a renamed setting to the variable that means the same, converting its value', () => {
    const { config } = readConfig(spec, {
      ...base,
      API_BODY_JSON_LIMIT: '5mb',
      PRETTY: 'compact',
      RATE_LIMIT_TTL: '30000',
      RATE_LIMIT_MAX_REQUESTS: '50',
    });
    expect(config).toMatchObject({ HTTP_JSON_LIMIT: '5mb', LOG_PRETTY: true, RATE_LIMIT_PER_MINUTE: 100 });
    // The reference's window length alone defaults to a minute, as its env files have it.
    expect(readConfig(spec, { ...base, RATE_LIMIT_MAX_REQUESTS: '7' }).config.RATE_LIMIT_PER_MINUTE).toBe(7);
  });

  it('refuses a rate that is no whole number per minute, and a value this gateway does not do, naming what to use', () => {
    expect(problemsOf({ RATE_LIMIT_TTL: '7000', RATE_LIMIT_MAX_REQUESTS: '10' })).toEqual([
      expect.stringMatching(/^RATE_LIMIT_MAX_REQUESTS .*not a whole number per minute; set RATE_LIMIT_PER_MINUTE/),
      expect.stringMatching(/^RATE_LIMIT_TTL .*not a whole number per minute/),
    ]);
    expect(problemsOf({ RATE_LIMIT_SKIP_FAILED: 'true', RATE_LIMIT_SKIP_SUCCESS: 'false' })).toEqual([
      expect.stringMatching(/^RATE_LIMIT_SKIP_FAILED .*=true: not supported: every request counts/),
    ]);
    expect(problemsOf({ SIWF_URL: 'https://example.test/siwf' })).toEqual([
      expect.stringMatching(/^SIWF_URL .*not supported: .*SIWF_V2_URL/),
    ]);
  });

  it('refuses a renamed setting that disagrees with the variable set beside it', () => {
    expect(problemsOf({ API_BODY_JSON_LIMIT: '5mb', HTTP_JSON_LIMIT: '1mb' })).toEqual([
      expect.stringMatching(/^API_BODY_JSON_LIMIT .*HTTP_JSON_LIMIT are both set and disagree \(5mb against 1mb\)/),
    ]);
    expect(problemsOf({ API_BODY_JSON_LIMIT: '1mb', HTTP_JSON_LIMIT: '1mb' })).toEqual([]);
  });

  it('leaves a renamed setting whose variable this component lacks to the component of its service that has it', () => {
    const { config, notices } = readConfig({ REDIS_URL: spec.REDIS_URL }, { ...base, API_BODY_JSON_LIMIT: '5mb' });
    expect(config).toEqual(base);
    expect(notices).toEqual([]);
  });

  it('names a variable that looks like one of the service but is none, with the nearest one', () => {
    const env = {
      ...base,
      RATE_LIMIT_PER_MINUTES: '5',
      RATE_LIMIT_KEY_PREFIX: 'x:throttle',
      REDIS_SERVICE_HOST: '10.0.0.1',
      REDIS_PORT_6379_TCP_ADDR: '10.0.0.1',
      HTTP_PROXY: 'http://127.0.0.1:3128',
      QUEUE_NAME: 'x',
      BATCH_SIZE: '9',
    };
    const { notices } = readConfig(spec, env, 'test-api', ['BATCH_MAX_COUNT']);
    expect(notices).toEqual([
      expect.stringMatching(/^RATE_LIMIT_KEY_PREFIX .*ignored: the rate windows are kept under/),
      'BATCH_SIZE is not a setting of test-api or of its service: ignored',
      'RATE_LIMIT_PER_MINUTES is not a setting of test-api or of its service: ignored (did you mean RATE_LIMIT_PER_MINUTE?)',
    ]);
  });
});
