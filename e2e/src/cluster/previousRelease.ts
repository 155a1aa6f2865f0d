import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { helmBinary, must, run } from '../commands.js';
import type { ChartRegistry, PublishedChart } from './chartRegistry.js';
import { retag, type ClusterImage } from './prepare.js';

/**
 * The last release: the newest version of charts/released.json, and its commit: the one its tag v<version> names,
 * or, in a clone that has no tags, the commit that recorded the version in charts/released.json (the commit
 * `make release` tags).
 */
export async function lastRelease(): Promise<{ version: string; commit: string }> {
  // The policy's own reading of charts/released.json (tools/src/chartRelease.ts), as `make release` keeps it.
  const last = await run('npx', ['tsx', 'tools/src/chartRelease.ts', 'last']);
  const newest = last.code === 0 ? last.stdout.trim() : undefined;
  if (!newest) throw new Error('charts/released.json names no release: make release tags one');
  const tagged = await run('git', ['rev-parse', '--verify', '-q', `v${newest}^{commit}`]);
  if (tagged.code === 0) return { version: newest, commit: tagged.stdout.trim() };
  const recorded = await run('git', ['log', '--reverse', '--format=%H', `-S"${newest}"`, '--', 'charts/released.json']);
  const commit = recorded.code === 0 ? recorded.stdout.split('\n')[0]?.trim() : undefined;
  if (!commit)
    throw new Error(
      `neither the tag v${newest} of the last release nor the commit that recorded it in charts/released.json is in ` +
        'this clone (a shallow clone has neither): git fetch --unshallow --tags',
    );
  return { version: newest, commit };
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
