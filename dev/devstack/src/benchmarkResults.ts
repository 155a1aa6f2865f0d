// A benchmark's machine-readable result: one JSON file per benchmark, docs/measurements/<benchmark>.json, from
// which tools/src/measurementsPage.ts makes docs/measurements.md. A benchmark prints its figures as it always did
// and, at its end, hands the same figures (its same-run baselines and ratios among them) to writeBenchmarkResult.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BenchmarkFigure {
  name: string;
  value: number;
  /** `MiB/s`, `ms`, `×` (a ratio), `requests`, … */
  unit: string;
  /** The name of the figure of the same run that this one is measured against, when it has one. */
  baseline?: string;
  /** What the figure should be, e.g. `≥ 0.8`. */
  goal?: string;
}

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  /** Kernel name, release and architecture. */
  os: string;
  node: string;
  /** 1, 5 and 15 minutes, when the result was written: on a shared machine, figures are as steady as this. */
  loadAverage: number[];
}

export interface BenchmarkResult {
  /** The file's name: lower case, digits and hyphens. */
  benchmark: string;
  title: string;
  /** When the result was written, ISO 8601. */
  date: string;
  /**
   * The commit measured; dirty when tracked files differed from it (the measurements themselves aside, so that
   * one benchmark's fresh result does not mark the next one dirty). `unknown` outside a git checkout.
   */
  commit: { sha: string; dirty: boolean };
  machine: Machine;
  figures: BenchmarkFigure[];
  /** What was measured with which parameters, in a sentence or two each. */
  notes?: string[];
}

export const MEASUREMENTS_DIR = fileURLToPath(new URL('../../../docs/measurements/', import.meta.url));

export function describeMachine(): Machine {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    os: `${type()} ${release()} ${arch()}`,
    node: process.version,
    loadAverage: loadavg().map((load) => Math.round(load * 100) / 100),
  };
}

export function currentCommit(repository: string): BenchmarkResult['commit'] {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repository, encoding: 'utf8' }).trim();
  try {
    const sha = git('rev-parse', 'HEAD');
    const changed = git(
      'status',
      '--porcelain',
      '--untracked-files=no',
      '--',
      '.',
      ':(exclude)docs/measurements',
      ':(exclude)docs/measurements.md',
    );
    return { sha, dirty: changed !== '' };
  } catch {
    return { sha: 'unknown', dirty: false };
  }
}

/** Prints a figure on a line of its own, its name padded to `width`, and returns it to be kept for the result. */
export function printFigure(figure: BenchmarkFigure, width = 50): BenchmarkFigure {
  process.stdout.write(`${figure.name.padEnd(width)}${figure.value} ${figure.unit}\n`);
  return figure;
}

/** Writes `<directory>/<benchmark>.json` (docs/measurements/ by default); returns its path. */
export function writeBenchmarkResult(
  result: Pick<BenchmarkResult, 'benchmark' | 'title' | 'figures' | 'notes'>,
  directory = MEASUREMENTS_DIR,
): string {
  if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(result.benchmark))
    throw new Error(`benchmark name ${JSON.stringify(result.benchmark)}: lower case, digits and hyphens only`);
  const unmeasured = result.figures.filter((figure) => !Number.isFinite(figure.value));
  if (unmeasured.length > 0)
    throw new Error(`${result.benchmark}: not a number: ${unmeasured.map((figure) => figure.name).join(', ')}`);
  const complete: BenchmarkResult = {
    benchmark: result.benchmark,
    title: result.title,
    date: new Date().toISOString(),
    commit: currentCommit(dirname(dirname(MEASUREMENTS_DIR))),
    machine: describeMachine(),
    figures: result.figures,
    ...(result.notes && result.notes.length > 0 ? { notes: result.notes } : {}),
  };
  mkdirSync(directory, { recursive: true });
  const path = join(directory, `${result.benchmark}.json`);
  writeFileSync(path, `${JSON.stringify(complete, null, 2)}\n`);
  return path;
}
