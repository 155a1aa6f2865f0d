// What a component says at start of the settings it ignores: the reference gateway's inert ones, and names that
// look like its own but are none. Each is one warning naming the setting, never its value.
import { startRedisServer, type LocalRedis } from '@frequency-gateway/devstack';
import { startTestComponent, testComponent } from './support/testComponent.js';

let redis: LocalRedis;
beforeAll(async () => (redis = await startRedisServer()));
afterAll(async () => redis.stop());

test('a component warns once of each ignored setting, by name, without its value', async () => {
  const component = await startTestComponent(testComponent, {
    REDIS_URL: redis.url,
    RATE_LIMIT_KEY_PREFIX: 'secret-looking-value-1',
    API_TOKEN: 'secret-looking-value-2',
  });
  try {
    const warnings = component.logs
      .map((line) => JSON.parse(line) as { level: string; setting?: string; msg: string })
      .filter((line) => line.setting !== undefined);
    expect(warnings.map(({ level, setting }) => [level, setting])).toEqual([
      ['warn', 'RATE_LIMIT_KEY_PREFIX'],
      ['warn', 'API_TOKEN'],
    ]);
    expect(warnings[1]!.msg).toContain('did you mean API_TOKENS?');
    expect(component.logs.join('\n')).not.toContain('secret-looking-value');
  } finally {
    await component.stop();
  }
});
