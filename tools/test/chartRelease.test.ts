import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findTool } from '@frequency-gateway/devstack';
import { chartDigest, chartVersionProblems, recordRelease, releasedCharts } from '../src/chartRelease.js';
import { repositoryRoot } from '../src/components.js';

const run = promisify(execFile);

/** A scratch copy of what the policy reads: package.json, charts/released.json and the chart. */
function scratchRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'chart-release-'));
  cpSync(join(repositoryRoot, 'package.json'), join(root, 'package.json'));
  cpSync(join(repositoryRoot, 'charts', 'released.json'), join(root, 'charts', 'released.json'));
  cpSync(join(repositoryRoot, 'charts', 'frequency-gateway'), join(root, 'charts', 'frequency-gateway'), {
    recursive: true,
  });
  return root;
}

function setVersion(root: string, version: string, appVersion = version): void {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(join(root, 'package.json'), JSON.stringify({ ...manifest, version }));
  const chartFile = join(root, 'charts', 'frequency-gateway', 'Chart.yaml');
  const chart = readFileSync(chartFile, 'utf8')
    .replace(/^version: .*$/m, `version: ${version}`)
    .replace(/^appVersion: .*$/m, `appVersion: '${appVersion}'`);
  writeFileSync(chartFile, chart);
}

function changeATemplate(root: string): void {
  const file = join(root, 'charts', 'frequency-gateway', 'templates', 'NOTES.txt');
  writeFileSync(file, `${readFileSync(file, 'utf8')}\nOne more line.\n`);
}

describe("the chart's version policy", () => {
  const roots: string[] = [];
  const scratch = () => {
    const root = scratchRoot();
    roots.push(root);
    return root;
  };
  afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

  it('holds for the repository as it is: the three versions agree and a released chart is unchanged', () => {
    expect(chartVersionProblems(repositoryRoot)).toEqual([]);
  });

  it('refuses a change to a released chart under the same version, and takes it with a bump', () => {
    const root = scratch();
    const version = recordRelease(root);
    expect(releasedCharts(root)[version]).toBe(chartDigest(root));
    changeATemplate(root);
    expect(chartVersionProblems(root)).toEqual([
      `charts/frequency-gateway changed since ${version} was released: bump the version (package.json, Chart.yaml version and appVersion)`,
    ]);
    const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
    setVersion(root, `${major}.${minor}.${patch + 1}`);
    expect(chartVersionProblems(root)).toEqual([]);
  });

  it('refuses a chart version or appVersion other than the project version, and a version older than the last release', () => {
    const root = scratch();
    recordRelease(root);
    writeFileSync(join(root, 'charts', 'released.json'), JSON.stringify({ '9.0.0': 'sha256:0' }));
    setVersion(root, '8.1.0', '8.1.1');
    const chartFile = join(root, 'charts', 'frequency-gateway', 'Chart.yaml');
    writeFileSync(chartFile, readFileSync(chartFile, 'utf8').replace(/^version: .*$/m, 'version: 8.2.0'));
    expect(chartVersionProblems(root)).toEqual([
      "Chart.yaml version 8.2.0 is not the project's version 8.1.0 (package.json)",
      "Chart.yaml appVersion 8.1.1 is not the project's version 8.1.0 (package.json)",
      'version 8.1.0 is not newer than the last release, 9.0.0',
    ]);
    expect(() => recordRelease(root)).toThrow(/not the project's version/);
  });

  it('make chart packages the chart at the project version, subcharts included', async () => {
    if (!findTool('helm', 'HELM_BIN')) throw new Error('missing: helm — build it with `make tools` (or set HELM_BIN)');
    const { stdout } = await run(join(repositoryRoot, 'tools', 'package-chart'), [], { cwd: repositoryRoot });
    const archive = join(repositoryRoot, stdout.trim().split('\n').pop()!);
    const { version } = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { version: string };
    expect(archive.endsWith(`dist/charts/frequency-gateway-${version}.tgz`)).toBe(true);
    const { stdout: listing } = await run('tar', ['-tzf', archive]);
    const files = listing.split('\n');
    for (const file of ['Chart.yaml', 'values.schema.json', 'charts/redis/Chart.yaml', 'charts/ipfs/Chart.yaml'])
      expect(files).toContain(`frequency-gateway/${file}`);
    const { stdout: chart } = await run('tar', ['-xzOf', archive, 'frequency-gateway/Chart.yaml']);
    expect(chart).toMatch(new RegExp(`^version: ${version.replaceAll('.', '\\.')}$`, 'm'));
    expect(chart).toMatch(new RegExp(`^appVersion: '?${version.replaceAll('.', '\\.')}'?$`, 'm'));
  }, 120_000);
});
