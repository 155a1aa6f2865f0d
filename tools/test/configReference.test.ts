import { readFileSync } from 'node:fs';
import { COMPONENTS } from '../src/components.js';
import { REFERENCE_PATH, renderConfigurationReference } from '../src/configReference.js';

describe('configuration reference', () => {
  it("is up to date with the components' schemas (run `npm run docs:config` when this fails)", () => {
    expect(readFileSync(REFERENCE_PATH, 'utf8')).toBe(renderConfigurationReference());
  });

  it('lists six components, each with every one of its variables', () => {
    const reference = renderConfigurationReference();
    expect(COMPONENTS.map((c) => c.name)).toEqual([
      'account-api',
      'account-worker',
      'content-publishing-api',
      'content-publishing-worker',
      'content-watcher-api',
      'content-watcher-worker',
    ]);
    for (const component of COMPONENTS) {
      const section = reference.split(`## ${component.name}\n`)[1]?.split('\n## ')[0] ?? '';
      for (const variable of Object.keys(component.config)) expect(section).toContain(`| \`${variable}\` |`);
    }
  });

  it('gives each component the port of the architecture', () => {
    expect(Object.fromEntries(COMPONENTS.map((c) => [c.name, c.defaultPort]))).toEqual({
      'account-api': 3013,
      'account-worker': 3023,
      'content-publishing-api': 3010,
      'content-publishing-worker': 3020,
      'content-watcher-api': 3011,
      'content-watcher-worker': 3021,
    });
  });
});
