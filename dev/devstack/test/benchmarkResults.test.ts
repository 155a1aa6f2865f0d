import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchmarkResult, writeBenchmarkResult } from '../src/index.js';

const folder = mkdtempSync(join(tmpdir(), 'benchmark-results-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('benchmark results', () => {
  it('writes <benchmark>.json with the date, the commit, the machine and the figures', () => {
    const figures = [
      { name: 'baseline: hash only', value: 812, unit: 'MiB/s' },
      { name: 'embedded: add', value: 240, unit: 'MiB/s', baseline: 'baseline: hash only' },
      { name: 'embedded: add time / hash time', value: 3.4, unit: '×', baseline: 'baseline: hash only', goal: '≤ 4' },
    ];
    const before = Date.now();
    const path = writeBenchmarkResult({ benchmark: 'storage-streaming', title: 'Streams', figures }, folder);

    expect(path).toBe(join(folder, 'storage-streaming.json'));
    const written = JSON.parse(readFileSync(path, 'utf8')) as BenchmarkResult;
    expect(written).toMatchObject({ benchmark: 'storage-streaming', title: 'Streams', figures });
    expect(written.notes).toBeUndefined();
    expect(Date.parse(written.date)).toBeGreaterThanOrEqual(before - 1000);
    expect(written.commit.sha).toBe(execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
    expect(typeof written.commit.dirty).toBe('boolean');
    expect(written.machine).toMatchObject({ cpus: cpus().length, node: process.version });
    expect(written.machine.memoryGiB).toBeGreaterThan(0);
    expect(written.machine.cpuModel.length).toBeGreaterThan(0);
    expect(written.machine.loadAverage).toHaveLength(3);
  });

  it('keeps notes, and refuses a name that is no file name or a figure that is no number', () => {
    const figures = [{ name: 'rate', value: 1, unit: '/s' }];
    const path = writeBenchmarkResult({ benchmark: 'noted', title: 'Noted', figures, notes: ['1 GiB'] }, folder);
    expect((JSON.parse(readFileSync(path, 'utf8')) as BenchmarkResult).notes).toEqual(['1 GiB']);
    expect(() => writeBenchmarkResult({ benchmark: '../escape', title: 'x', figures }, folder)).toThrow(
      'lower case, digits and hyphens only',
    );
    const nan = [...figures, { name: 'p99', value: Number.NaN, unit: 'ms' }];
    expect(() => writeBenchmarkResult({ benchmark: 'nan', title: 'x', figures: nan }, folder)).toThrow(
      'nan: not a number: p99',
    );
  });
});
