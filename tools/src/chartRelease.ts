// The chart's version policy. The chart's `version` and `appVersion` are the project's version (package.json), and a
// released version is never changed: charts/released.json records the digest of the chart each version was released
// with, so a chart that differs from it under the same version is refused until the version is bumped.
//   tsx tools/src/chartRelease.ts check    the policy holds (make chart runs it before packaging)
//   tsx tools/src/chartRelease.ts record   record the chart as released under its version (make release)
//   tsx tools/src/chartRelease.ts last     print the last release's version (the cluster suite upgrades from it)
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';

/** Run by tools/package-chart before anything is built: it imports nothing of the workspaces. */
const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));
const CHART = join('charts', 'frequency-gateway');
const RELEASED = join('charts', 'released.json');

/** sha256 over the chart folder: every file's path (relative, sorted) and bytes. */
export function chartDigest(root: string): string {
  const folder = join(root, CHART);
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk(folder);
  const hash = createHash('sha256');
  for (const file of files.map((path) => relative(folder, path)).sort()) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(folder, file)));
    hash.update('\0');
  }
  return `sha256:${hash.digest('hex')}`;
}

/** Released versions and the digest of the chart each was released with. */
export function releasedCharts(root: string): Record<string, string> {
  return JSON.parse(readFileSync(join(root, RELEASED), 'utf8')) as Record<string, string>;
}

const parts = (version: string) => version.split(/[.-]/).map((part) => Number.parseInt(part, 10));

function newer(a: string, b: string): boolean {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) > (y[i] ?? 0);
  return false;
}

/** The newest version of charts/released.json (the last release), if any. */
export function lastReleased(root: string): string | undefined {
  return Object.keys(releasedCharts(root)).reduce<string | undefined>(
    (top, version) => (top === undefined || newer(version, top) ? version : top),
    undefined,
  );
}

export interface ChartVersions {
  project: string;
  chart: string;
  app: string;
}

export function chartVersions(root: string): ChartVersions {
  const project = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
  const chart = parse(readFileSync(join(root, CHART, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
  return { project, chart: String(chart.version), app: String(chart.appVersion) };
}

/** What breaks the policy, one line each; empty when it holds. */
export function chartVersionProblems(root: string): string[] {
  const { project, chart, app } = chartVersions(root);
  const problems: string[] = [];
  if (chart !== project)
    problems.push(`Chart.yaml version ${chart} is not the project's version ${project} (package.json)`);
  if (app !== project)
    problems.push(`Chart.yaml appVersion ${app} is not the project's version ${project} (package.json)`);
  const released = releasedCharts(root);
  const digest = chartDigest(root);
  const recorded = released[project];
  if (recorded !== undefined && recorded !== digest)
    problems.push(
      `charts/frequency-gateway changed since ${project} was released: bump the version (package.json, Chart.yaml version and appVersion)`,
    );
  const newest = lastReleased(root);
  if (recorded === undefined && newest !== undefined && !newer(project, newest))
    problems.push(`version ${project} is not newer than the last release, ${newest}`);
  return problems;
}

/** Records the chart as released under its version; refuses when the policy does not hold. */
export function recordRelease(root: string): string {
  const problems = chartVersionProblems(root);
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const { project } = chartVersions(root);
  const released = { ...releasedCharts(root), [project]: chartDigest(root) };
  writeFileSync(join(root, RELEASED), `${JSON.stringify(released, null, 2)}\n`);
  return project;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const command = process.argv[2];
  if (command === 'check') {
    const problems = chartVersionProblems(repositoryRoot);
    for (const problem of problems) process.stderr.write(`chart version: ${problem}\n`);
    process.exitCode = problems.length > 0 ? 1 : 0;
  } else if (command === 'last') {
    const last = lastReleased(repositoryRoot);
    if (last) process.stdout.write(`${last}\n`);
    else process.exitCode = 1;
  } else if (command === 'record') {
    process.stdout.write(`chart ${recordRelease(repositoryRoot)} recorded in ${RELEASED}\n`);
  } else {
    process.stderr.write('usage: chartRelease.ts check|record|last\n');
    process.exitCode = 2;
  }
}
