import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHART_DIR, CHART_README, documentValues, renderChartReadme } from '../src/chartReference.js';

describe('chart values reference', () => {
  it('is up to date with values.yaml (run `npm run docs:chart` when this fails)', () => {
    expect(readFileSync(CHART_README, 'utf8')).toBe(renderChartReadme());
  });

  it.each(['values.yaml', 'charts/redis/values.yaml', 'charts/ipfs/values.yaml'])(
    'documents every key of %s with a `# --` comment (on the key or a key around it)',
    (file) => {
      const { documented, undocumented } = documentValues(readFileSync(join(CHART_DIR, file), 'utf8'));
      expect(undocumented).toEqual([]);
      expect(documented.length).toBeGreaterThan(15);
      for (const { key, description } of documented) expect(`${key}: ${description.length > 8}`).toBe(`${key}: true`);
    },
  );

  it('finds a key left without a description, and takes defaults from the YAML itself', () => {
    const values = ['# -- Documented.', 'a:', '  b: 1', 'c:', '  d: [x]', '  # -- Inner.', '  e: 2'].join('\n');
    const result = documentValues(values);
    expect(result.undocumented).toEqual(['c.d']);
    expect(result.documented).toEqual([
      { key: 'a', description: 'Documented.', value: { b: 1 } },
      { key: 'c.e', description: 'Inner.', value: 2 },
    ]);
  });
});
