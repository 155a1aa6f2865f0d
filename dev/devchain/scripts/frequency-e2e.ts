/**
 * Measures the devchain with Frequency's own end-to-end suite: every mocha file of a checked-out Frequency
 * `e2e/` folder runs on its own against a fresh devchain with instant sealing (as Frequency's CI runs the
 * suite against `frequency --dev --sealing=instant`), and a per-file table of passed / failed / pending
 * tests is printed. It fetches nothing: the e2e folder must already have its npm dependencies installed
 * (see docs/devchain.md, "Running the suite").
 *
 *   node --import tsx --conditions=source scripts/frequency-e2e.ts <e2e folder> [--only a.test.ts,b.test.ts]
 *        [--json results.json] [--file-timeout 900] [--node path/to/node]
 *
 * `--node` runs mocha with another Node.js (the suite wants Node 22; the devchain itself runs here). A test
 * counts as failed when it failed or never ran (a failing `before` hook skips its suite); the totals per file
 * come from a dry run of the whole suite without its global hooks, so they do not depend on the chain.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startDevchain } from '../src/devchain.js';

interface MochaTest {
  title: string;
  fullTitle: string;
  file?: string;
  err?: { message?: string };
}
interface MochaReport {
  stats: { tests: number; passes: number; failures: number; pending: number };
  passes: MochaTest[];
  failures: MochaTest[];
  pending: MochaTest[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    only: { type: 'string' },
    json: { type: 'string' },
    'file-timeout': { type: 'string', default: '900' },
    node: { type: 'string', default: process.execPath },
  },
});
const folder = positionals[0];
if (!folder) {
  process.stderr.write(
    'usage: frequency-e2e.ts <frequency e2e folder> [--only a.test.ts,…] [--json out.json] [--file-timeout s]\n',
  );
  process.exit(2);
}
const fileTimeoutMs = Number(values['file-timeout']) * 1000;
// The suite names each file's funding key after its path below a folder called `e2e` (its place in the
// repository); elsewhere the keys it funds and the keys its files use differ.
if (basename(resolve(folder)) !== 'e2e') {
  process.stderr.write(`frequency-e2e: the folder must be Frequency's e2e folder, named e2e (got ${folder})\n`);
  process.exit(2);
}

/** The suite's own selection (.mocharc.json): every *.test.ts outside node_modules and load-tests. */
function testFiles(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'load-tests') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...testFiles(path));
    else if (entry.endsWith('.test.ts')) found.push(path);
  }
  return found.sort();
}

const scratch = mkdtempSync(join(tmpdir(), 'frequency-e2e-'));

/**
 * The suite's own mocha configuration without its `spec` (mocha would add every file of it to the one asked
 * for) and run serially; the dry run's also without the global and root hooks, which need a chain.
 */
const suiteConfig = JSON.parse(readFileSync(join(folder, '.mocharc.json'), 'utf8')) as Record<string, unknown>;
delete suiteConfig.spec;
delete suiteConfig.parallel;
const runConfig = join(scratch, 'run.mocharc.json');
writeFileSync(runConfig, JSON.stringify(suiteConfig));
const dryConfig = join(scratch, 'dry-run.mocharc.json');
const withoutHooks = { ...suiteConfig };
delete withoutHooks.require;
writeFileSync(dryConfig, JSON.stringify(withoutHooks));

/** Runs mocha on `files` against a fresh devchain; resolves with its JSON report (undefined if it wrote none). */
async function runMocha(files: string[], extra: string[]): Promise<{ report?: MochaReport; output: string }> {
  const devchain = await startDevchain({
    sealing: 'instant',
    finalityLag: 0,
    onInternalError: (error, method) =>
      process.stderr.write(`devchain internal error in ${method}: ${String(error)}\n`),
  });
  const out = join(scratch, `report-${Date.now()}.json`);
  try {
    const mocha = join(folder as string, 'node_modules', 'mocha', 'bin', 'mocha.js');
    const args = [mocha, '--no-parallel', '--reporter', 'json', '--reporter-option', `output=${out}`, ...extra];
    const child = spawn(values.node as string, [...args, ...files.map((f) => relative(folder as string, f))], {
      cwd: folder,
      env: { ...process.env, CHAIN_ENVIRONMENT: 'dev', WS_PROVIDER_URL: devchain.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), fileTimeoutMs);
    await new Promise((resolve) => child.once('exit', resolve));
    clearTimeout(timer);
    let report: MochaReport | undefined;
    try {
      report = JSON.parse(readFileSync(out, 'utf8')) as MochaReport;
    } catch {
      report = undefined;
    }
    return { ...(report ? { report } : {}), output };
  } finally {
    await devchain.close();
  }
}

const all = testFiles(folder);
const only = values.only?.split(',').map((name) => name.trim());
const selected = only ? all.filter((file) => only.some((name) => file.endsWith(name))) : all;

// Totals per file: a dry run lists every test the files declare for a dev chain. A file that cannot even be
// loaded (a dependency that fails to import) breaks a whole-suite dry run, so then each file is dry-run alone.
const declared = new Map<string, number>();
const unloadable = new Set<string>();
const count = (report: MochaReport) => {
  for (const test of [...report.passes, ...report.pending]) {
    const file = relative(folder, test.file ?? '');
    declared.set(file, (declared.get(file) ?? 0) + 1);
  }
};
const dry = await runMocha(selected, ['--dry-run', '--config', dryConfig]);
if (dry.report) count(dry.report);
else {
  for (const file of selected) {
    const alone = await runMocha([file], ['--dry-run', '--config', dryConfig]);
    if (alone.report) count(alone.report);
    else unloadable.add(relative(folder, file));
  }
}

interface Row {
  file: string;
  tests: number;
  passed: number;
  failed: number;
  pending: number;
  passes: string[];
  failures: { test: string; error: string }[];
}
const rows: Row[] = [];
for (const file of selected) {
  const name = relative(folder, file);
  const started = Date.now();
  if (unloadable.has(name)) {
    rows.push({
      file: name,
      tests: 0,
      passed: 0,
      failed: 0,
      pending: 0,
      passes: [],
      failures: [{ test: '(file)', error: 'does not load' }],
    });
    process.stderr.write(`${name}: does not load (its imports fail)\n`);
    continue;
  }
  const { report, output } = await runMocha([file], ['--config', runConfig]);
  const tests = declared.get(name) ?? 0;
  const passed = report?.stats.passes ?? 0;
  const pending = report?.stats.pending ?? 0;
  const failures = (report?.failures ?? []).map((f) => ({
    test: f.fullTitle,
    error: (f.err?.message ?? '').split('\n')[0]?.slice(0, 300) ?? '',
  }));
  if (!report) failures.push({ test: '(no report)', error: output.slice(-300) });
  const passes = (report?.passes ?? []).map((p) => p.fullTitle);
  const row = { file: name, tests, passed, failed: Math.max(0, tests - passed - pending), pending, passes, failures };
  rows.push(row);
  process.stderr.write(
    `${name}: ${passed}/${tests} passed, ${pending} pending (${Math.round((Date.now() - started) / 1000)} s)\n`,
  );
}

const width = Math.max(...rows.map((r) => r.file.length), 4);
const line = (cells: (string | number)[]) =>
  `| ${String(cells[0]).padEnd(width)} | ${cells
    .slice(1)
    .map((c) => String(c).padStart(6))
    .join(' | ')} |`;
const table = [
  line(['file', 'tests', 'passed', 'failed', 'pending']),
  `|${'-'.repeat(width + 2)}|${['', '', '', ''].map(() => '-------:').join('|')}|`,
  ...rows.map((r) => line([r.file, r.tests, r.passed, r.failed, r.pending])),
  line([
    'total',
    ...(['tests', 'passed', 'failed', 'pending'] as const).map((k) => rows.reduce((sum, r) => sum + r[k], 0)),
  ]),
];
process.stdout.write(`${table.join('\n')}\n`);
if (values.json) writeFileSync(values.json, `${JSON.stringify(rows, null, 1)}\n`);
rmSync(scratch, { recursive: true, force: true });
