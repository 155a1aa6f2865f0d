// The reference gateway's three env templates (env-files/<service>.template.env, their settings and example
// values) read by this gateway's components: every setting is taken with the same meaning, carried over, or
// refused at start naming what to use instead; none is ignored without a word.
import { REFERENCE_TEMPLATES } from '@frequency-gateway/devstack';
import { readConfig, REFERENCE_NAMES, type ConfigError } from '@frequency-gateway/platform';
import { COMPONENTS } from '../src/components.js';

const REFUSED = new Set(
  Object.entries(REFERENCE_NAMES)
    .filter(([, rule]) => rule.kind === 'refused')
    .map(([name]) => name),
);

describe.each(Object.entries(REFERENCE_TEMPLATES))("the reference's %s template", (service, template) => {
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
