// The developer's loop with `skaffold dev` on the local cluster, measured: in a namespace of its own and a temporary
// copy of the working tree, skaffold builds the image, installs the chart with the dev profile and forwards the
// three apis to loopback; then a source file is saved with a visible change and the time until a redeployed api
// serves it is taken, with where it went (skaffold's own log lines mark the build and the rollout). The skaffold
// suite asserts on what this returns; `make bench` prints it.
import { access, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { waitUntil } from '@frequency-gateway/devstack';
import {
  createNamespace,
  deleteNamespace,
  fetchText,
  kubectl,
  REPOSITORY_ROOT,
  requireLocalCluster,
  runCommand,
} from './localCluster.js';
import { startSkaffoldDev, type SkaffoldDev } from './skaffoldDev.js';

export const SKAFFOLD_APIS = [
  'frequency-gateway-account-api',
  'frequency-gateway-content-publishing-api',
  'frequency-gateway-content-watcher-api',
] as const;
// A route summary the account api's OpenAPI document shows: the harmless change that is saved.
const EDITED_FILE = 'services/account/src/api/accountRoutes.ts';
const SUMMARY = 'The MSA id and handle of an account key';
const TOOL_CACHE = join(homedir(), '.cache/frequency-gateway/bin');

/** Why skaffold dev cannot be measured here, or nothing when it can (the local cluster up, skaffold built). */
export async function skaffoldDevPrerequisites(): Promise<string | undefined> {
  try {
    await requireLocalCluster();
  } catch (error) {
    return (error as Error).message;
  }
  const missing = await Promise.all(
    ['skaffold', 'helm3'].map((tool) =>
      access(join(TOOL_CACHE, tool)).then(
        () => false,
        () => true,
      ),
    ),
  );
  return missing.some(Boolean)
    ? `skaffold and helm3 are missing from ${TOOL_CACHE}: run tools/install-skaffold`
    : undefined;
}

export interface SaveToServing {
  /** Local URL of each api's forward. */
  forwards: Map<string, string>;
  startToServingMs: number;
  saveToServingMs: number;
  /** From skaffold's log, when it printed the lines: save → rebuild started, build and load, upgrade and rollout. */
  phasesMs: { watcher?: number; build?: number; rollout?: number; forward?: number };
  /** The account api's OpenAPI document before the save carried the summary and not the marker; after, the marker. */
  documentBefore: { summary: boolean; marker: boolean };
  documentAfterHasMarker: boolean;
  imageBefore: string;
  imageAfter: string;
  /** /readyz status of the other two apis through their forwards after the redeploy. */
  otherApisAfter: number[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The figures as lines of `name value` (the suite and the benchmark print the same). */
export function describeSaveToServing(run: SaveToServing, prefix: string): string[] {
  const lines = [
    `${prefix}start to serving ${seconds(run.startToServingMs)}`,
    `${prefix}save to serving ${seconds(run.saveToServingMs)}`,
  ];
  const { watcher, build, rollout, forward } = run.phasesMs;
  if (watcher !== undefined) lines.push(`  save to rebuild started (watcher) ${seconds(watcher)}`);
  if (build !== undefined) lines.push(`  image build and load ${seconds(build)}`);
  if (rollout !== undefined) lines.push(`  helm upgrade and rollout ${seconds(rollout)}`);
  if (forward !== undefined) lines.push(`  rolled out to served through the forward ${seconds(forward)}`);
  return lines;
}

/**
 * Runs `dev/cluster/skaffold dev` in a copy of the working tree until a saved change is served, then stops it (skaffold
 * uninstalls the release) and removes the namespace and the copy. Throws, with skaffold's last lines, when it exits
 * or a step does not happen within `stepTimeoutMs`.
 */
export async function measureSaveToServing(stepTimeoutMs = 20 * 60_000): Promise<SaveToServing> {
  const why = await skaffoldDevPrerequisites();
  if (why) throw new Error(why);
  let copy = '';
  let namespace = '';
  let dev: SkaffoldDev | undefined;
  try {
    copy = await copyWorkingTree();
    namespace = await createNamespace('fg-observe-skaffold');
    const started = performance.now();
    dev = startSkaffoldDev(
      copy,
      [
        '--namespace',
        namespace,
        '--port-forward=user',
        '--cache-artifacts=false',
        '--tail=false',
        '--interactive=false',
      ],
      process.env,
    );
    const running = dev;
    const whileRunning = async (what: string, check: () => Promise<boolean>) => {
      await waitUntil(
        async () => running.exitCode() !== null || (await check()),
        stepTimeoutMs,
        () => `${what}; skaffold's last lines:\n${running.output().split('\n').slice(-40).join('\n')}`,
      );
      if (running.exitCode() !== null)
        throw new Error(
          `skaffold dev exited with ${running.exitCode()} while waiting for ${what}:\n${running.output()}`,
        );
    };
    const apiImage = () =>
      kubectl([
        '-n',
        namespace,
        'get',
        'deployment',
        SKAFFOLD_APIS[0],
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]);

    // First deploy: every api answers /readyz through its forward.
    await whileRunning('the three apis ready through their port-forwards', async () => {
      if (!SKAFFOLD_APIS.every((api) => running.forwards.has(api))) return false;
      const answers = await Promise.all(SKAFFOLD_APIS.map((api) => fetchText(`${running.forwards.get(api)}/readyz`)));
      return answers.every((answer) => answer?.status === 200);
    });
    const firstServing = performance.now();
    const accountUrl = running.forwards.get(SKAFFOLD_APIS[0])!;
    const marker = `edited by the skaffold run ${randomBytes(4).toString('hex')}`;
    const before = (await fetchText(`${accountUrl}/docs/swagger.json`))?.body ?? '';
    const imageBefore = await apiImage();

    // The change: a marker in a route summary, saved the way an editor does (the whole file rewritten).
    const source = await readFile(join(copy, EDITED_FILE), 'utf8');
    if (!source.includes(`summary: '${SUMMARY}'`))
      throw new Error(`${EDITED_FILE} no longer has the summary '${SUMMARY}'`);
    await writeFile(
      join(copy, EDITED_FILE),
      source.replace(`summary: '${SUMMARY}'`, `summary: '${SUMMARY} (${marker})'`),
    );
    const saved = performance.now();
    await whileRunning(
      'the account api to serve the saved change',
      async () => (await fetchText(`${accountUrl}/docs/swagger.json`))?.body.includes(marker) ?? false,
    );
    const serving = performance.now();

    const buildStarted = running.eventAfter(saved, /Generating tags|Checking cache|Building \[frequency-gateway\]/);
    const built = running.eventAfter(saved, /Build \[frequency-gateway\] succeeded/);
    const stabilized = running.eventAfter(saved, /Deployments stabilized/);
    return {
      forwards: new Map(running.forwards),
      startToServingMs: firstServing - started,
      saveToServingMs: serving - saved,
      phasesMs: {
        watcher: buildStarted && buildStarted.at - saved,
        build: buildStarted && built && built.at - buildStarted.at,
        rollout: built && stabilized && stabilized.at - built.at,
        forward: stabilized && serving - stabilized.at,
      },
      documentBefore: { summary: before.includes(SUMMARY), marker: before.includes(marker) },
      documentAfterHasMarker: (await fetchText(`${accountUrl}/docs/swagger.json`))?.body.includes(marker) ?? false,
      imageBefore,
      imageAfter: await apiImage(),
      otherApisAfter: await Promise.all(
        SKAFFOLD_APIS.slice(1).map(
          async (api) => (await fetchText(`${running.forwards.get(api)}/readyz`))?.status ?? 0,
        ),
      ),
    };
  } finally {
    await dev?.stop();
    if (namespace) await deleteNamespace(namespace);
    if (copy) await rm(copy, { recursive: true, force: true });
  }
}

/** The repository as it is in the working tree (tracked and new files, not what git ignores), in a temporary folder. */
async function copyWorkingTree(): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'skaffold-dev-'));
  const files = await runCommand('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPOSITORY_ROOT,
  });
  for (const file of files.split('\0').filter(Boolean)) {
    await cp(join(REPOSITORY_ROOT, file), join(copy, file), { preserveTimestamps: true }).catch((error: unknown) => {
      // A tracked file deleted in the working tree.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    });
  }
  return copy;
}
