import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helmBinary, must, run } from '../commands.js';
import type { ChartRegistry, PublishedChart } from './chartRegistry.js';
import { retag, type ClusterImage } from './prepare.js';

/** The last release: the newest version of charts/released.json, and the commit its tag v<version> names. */
export async function lastRelease(): Promise<{ version: string; commit: string }> {
  // The policy's own reading of charts/released.json (tools/src/chartRelease.ts), as `make release` keeps it.
  const last = await run('npx', ['tsx', 'tools/src/chartRelease.ts', 'last']);
  const newest = last.code === 0 ? last.stdout.trim() : undefined;
  if (!newest) throw new Error('charts/released.json names no release: make release tags one');
  const found = await run('git', ['rev-parse', '--verify', '-q', `v${newest}^{commit}`]);
  if (found.code !== 0)
    throw new Error(
      `the tag v${newest} of the last release is not in this clone (a shallow clone has no tags): git fetch --tags`,
    );
  return { version: newest, commit: found.stdout.trim() };
}

/** The last release as its tag made it: the image built by its own Dockerfile and scripts, and its chart pushed. */
export interface PreviousRelease {
  version: string;
  commit: string;
  image: ClusterImage;
  chart: PublishedChart;
}

/**
 * Builds the last release from a worktree of its tag: its image (tagged `release-<content>` in the cluster) and its
 * chart, packaged and pushed to `registry`. An unchanged release builds from Docker's cache.
 */
export async function buildPreviousRelease(registry: ChartRegistry): Promise<PreviousRelease> {
  const { version, commit } = await lastRelease();
  const helm = helmBinary();
  if (!helm) throw new Error('helm is missing: run make tools');
  const tree = mkdtempSync(join(tmpdir(), `gateway-v${version}-`));
  await must('git', ['worktree', 'add', '--detach', '--force', tree, commit]);
  try {
    const built = `frequency-gateway:v${version}`;
    await must(join(tree, 'dev', 'images', 'gateway'), [built], { cwd: tree, timeoutMs: 1_800_000 });
    const image = await retag(built, 'release-');
    const packaged = await must(helm, ['package', join(tree, 'charts', 'frequency-gateway'), '--destination', tree]);
    const archive = /saved it to: (\S+\.tgz)/.exec(packaged)?.[1];
    if (!archive) throw new Error(`helm package printed no archive: ${packaged}`);
    const chart = await registry.push(archive);
    return { version, commit, image, chart };
  } finally {
    await run('git', ['worktree', 'remove', '--force', tree]);
    rmSync(tree, { recursive: true, force: true });
  }
}
