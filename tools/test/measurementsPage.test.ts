import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeBenchmarkResult } from '@frequency-gateway/devstack';
import { MEASUREMENTS_PAGE, renderMeasurementsPage } from '../src/measurementsPage.js';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));
const folder = () => {
  const made = mkdtempSync(join(tmpdir(), 'measurements-'));
  folders.push(made);
  return made;
};

describe('measurements page', () => {
  it('is up to date with docs/measurements/*.json (run `npm run docs:measurements` when this fails)', () => {
    expect(readFileSync(MEASUREMENTS_PAGE, 'utf8')).toBe(renderMeasurementsPage());
  });

  it('has a section per result file, in the order of the names, with when, where and every figure', () => {
    const results = folder();
    writeBenchmarkResult(
      {
        benchmark: 'zeta-load',
        title: 'Zeta under load',
        figures: [
          { name: 'baseline: bare | handler', value: 900, unit: 'req/s' },
          { name: 'api', value: 450, unit: 'req/s', baseline: 'baseline: bare | handler' },
          { name: 'ratio api / baseline', value: 0.5, unit: '×', baseline: 'baseline: bare | handler', goal: '≥ 0.5' },
        ],
        notes: ['32 connections for 4 s.'],
      },
      results,
    );
    writeBenchmarkResult(
      { benchmark: 'alpha', title: 'Alpha', figures: [{ name: 'start', value: 12, unit: 'ms' }] },
      results,
    );
    const page = renderMeasurementsPage(results);

    expect(page.indexOf('## Alpha')).toBeLessThan(page.indexOf('## Zeta under load'));
    const zeta = page.slice(page.indexOf('## Zeta under load'));
    expect(zeta).toMatch(
      /^`zeta-load`, \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC, commit [0-9a-f]{12}.*; load average [\d.]+, [\d.]+, [\d.]+ at the end\.$/m,
    );
    expect(zeta).toContain('32 connections for 4 s.');
    expect(zeta).toContain('| baseline: bare \\| handler | 900 req/s |  |  |');
    expect(zeta).toContain('| ratio api / baseline | 0.5 × | baseline: bare \\| handler | ≥ 0.5 |');
    expect(page).toContain('| start | 12 ms |  |  |');
  });

  it('fails naming a file that is not the result of its name', () => {
    const results = folder();
    writeFileSync(join(results, 'renamed.json'), JSON.stringify({ benchmark: 'other', figures: [] }));
    expect(() => renderMeasurementsPage(results)).toThrow('docs/measurements/renamed.json is not a benchmark result');
  });
});
