import { z } from 'zod';
import {
  ConfigError,
  parseConfig,
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
