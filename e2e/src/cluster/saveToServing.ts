// The developer's loop with `skaffold dev` on the local cluster, measured: in a namespace of its own and a temporary
// copy of the working tree, skaffold builds the development image, installs the chart with the dev profile and
// forwards the three apis to loopback. Then, in a row: saved edits of a service's source and of a shared package's
// source (file sync: the saved file is copied into the running containers, whose watcher restarts what imports it),
// and one edit of a package manifest (a rebuild and a rollout), each timed from the save until the account api serves
// it, with where the time went (skaffold's own log lines). The skaffold suite asserts on what this returns;
// `make bench` prints it.
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
const TOOL_CACHE = join(homedir(), '.cache/frequency-gateway/bin');
/**
 * Saved edits of each kind that file sync serves (the median and the worst are reported): 5, or SKAFFOLD_EDITS (CI
 * runs one of each kind, which asserts the same paths in a third of the time).
 */
export const EDITS_IN_A_ROW = Number(process.env.SKAFFOLD_EDITS ?? 5);

/**
 * The harmless, visible changes that are saved: a text the account api's OpenAPI document shows, in a file of the
 * service (a route summary) and in a file of a shared package (the 400 answer every api documents); and a package
 * manifest's description, which no document shows but which changes what the image installs from.
 */
const EDITS = {
  service: {
    file: 'services/account/src/api/accountRoutes.ts',
    text: "summary: 'The MSA id and handle of an account key",
  },
  shared: { file: 'shared/platform/src/http/openapi.ts', text: "failure('The request is invalid" },
  manifest: { file: 'services/account/package.json', text: '"description": "Account service' },
} as const;

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

/** One saved edit served by file sync. */
export interface SyncedEdit {
  saveToServingMs: number;
  /** From the save to skaffold's "Syncing" line (its watcher), when it printed one. */
  watcherMs?: number;
}

export interface SaveToServing {
  /** Local URL of each api's forward. */
  forwards: Map<string, string>;
  startToServingMs: number;
  serviceEdits: SyncedEdit[];
  sharedEdits: SyncedEdit[];
  /** The manifest edit: save to serving, and from skaffold's log, save → rebuild started, build and load, rollout. */
  rebuild: {
    saveToServingMs: number;
    phasesMs: { watcher?: number; build?: number; rollout?: number; forward?: number };
  };
  /** The account api loaded its packages from the development image's vendor bundle (dev/images/dev-vendor.mjs). */
  vendorBundle: boolean;
  /** The account api's OpenAPI document before the first save had the texts and no marker. */
  documentBefore: { texts: boolean; marker: boolean };
  /** The account api's image and Pods (name and restarts): at the start, after the synced edits, after the rebuild. */
  deployed: { before: Deployed; afterSync: Deployed; afterRebuild: Deployed };
  /** Image builds skaffold started: after the first deploy's, during the synced edits and for the manifest edit. */
  buildsDuringSync: number;
  buildsForManifest: number;
  /** /readyz status of the other two apis through their forwards at the end. */
  otherApisAfter: number[];
}

export interface Deployed {
  image: string;
  /** `name:restarts` of each account api Pod. */
  pods: string[];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Median and worst save to serving of a row of synced edits. */
export function editFigures(edits: SyncedEdit[]): { medianMs: number; worstMs: number } {
  const times = edits.map((edit) => edit.saveToServingMs);
  return { medianMs: median(times), worstMs: Math.max(...times) };
}

/** The figures as lines of `name value` (the suite and the benchmark print the same). */
export function describeSaveToServing(run: SaveToServing, prefix: string): string[] {
  const row = (what: string, edits: SyncedEdit[]) => {
    const { medianMs, worstMs } = editFigures(edits);
    const each = edits.map((edit) => (edit.saveToServingMs / 1000).toFixed(1)).join(', ');
    const watched = edits.flatMap((edit) => (edit.watcherMs === undefined ? [] : [edit.watcherMs]));
    const watcher = watched.length > 0 ? `; save to skaffold syncing: median ${seconds(median(watched))}` : '';
    return `${prefix}save to serving, ${what} (file sync, ${edits.length} in a row): median ${seconds(medianMs)}, worst ${seconds(worstMs)} (${each} s${watcher})`;
  };
  const lines = [
    `${prefix}start to serving ${seconds(run.startToServingMs)}`,
    row('a service source edit', run.serviceEdits),
    row('a shared source edit', run.sharedEdits),
    `${prefix}save to serving, a package manifest edit (image rebuilt) ${seconds(run.rebuild.saveToServingMs)}`,
  ];
  const { watcher, build, rollout, forward } = run.rebuild.phasesMs;
  if (watcher !== undefined) lines.push(`  save to rebuild started (watcher) ${seconds(watcher)}`);
  if (build !== undefined) lines.push(`  image build and load ${seconds(build)}`);
  if (rollout !== undefined) lines.push(`  helm upgrade and rollout ${seconds(rollout)}`);
  if (forward !== undefined) lines.push(`  rolled out to served through the forward ${seconds(forward)}`);
  return lines;
}

const BUILD_STARTED = /Generating tags|Checking cache|Building \[frequency-gateway\]/;

/**
 * Runs `dev/cluster/skaffold dev` in a copy of the working tree through the edits, then stops it (skaffold
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
    const deployed = async (): Promise<Deployed> => ({
      image: await kubectl([
        '-n',
        namespace,
        'get',
        'deployment',
        SKAFFOLD_APIS[0],
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      ]),
      pods: (
        await kubectl([
          '-n',
          namespace,
          'get',
          'pods',
          '-l',
          'app.kubernetes.io/component=account-api',
          '-o',
          'jsonpath={range .items[*]}{.metadata.name}:{.status.containerStatuses[0].restartCount}{"\\n"}{end}',
        ])
      )
        .split('\n')
        .filter(Boolean)
        .sort(),
    });
    const builds = (since: number) =>
      running.events.filter((event) => event.at >= since && BUILD_STARTED.test(event.line)).length;

    // First deploy: every api answers /readyz through its forward.
    await whileRunning('the three apis ready through their port-forwards', async () => {
      if (!SKAFFOLD_APIS.every((api) => running.forwards.has(api))) return false;
      const answers = await Promise.all(SKAFFOLD_APIS.map((api) => fetchText(`${running.forwards.get(api)}/readyz`)));
      return answers.every((answer) => answer?.status === 200);
    });
    const firstServing = performance.now();
    const accountUrl = running.forwards.get(SKAFFOLD_APIS[0])!;
    const document = async () => (await fetchText(`${accountUrl}/docs/swagger.json`))?.body ?? '';
    const runId = randomBytes(3).toString('hex');
    const before = await document();
    const deployedBefore = await deployed();
    const vendorBundle = (
      await kubectl(['-n', namespace, 'logs', `deployment/${SKAFFOLD_APIS[0]}`, '--tail=-1'])
    ).includes('dev-vendor: account: ');

    const originals = new Map<string, string>();
    for (const { file, text } of Object.values(EDITS)) {
      const source = await readFile(join(copy, file), 'utf8');
      if (source.split(text).length !== 2) throw new Error(`${file} no longer has ${text} once`);
      originals.set(file, source);
    }
    /** Saves the file the way an editor does (the whole file rewritten), with the marker after the text. */
    const save = async (edit: (typeof EDITS)[keyof typeof EDITS], marker: string) => {
      await writeFile(join(copy, edit.file), originals.get(edit.file)!.replace(edit.text, `${edit.text} (${marker})`));
      return performance.now();
    };
    const syncedEdits = async (kind: 'service' | 'shared'): Promise<SyncedEdit[]> => {
      const edits: SyncedEdit[] = [];
      for (let n = 1; n <= EDITS_IN_A_ROW; n++) {
        const marker = `${kind} edit ${n} of run ${runId}`;
        const saved = await save(EDITS[kind], marker);
        await whileRunning(`the account api to serve ${marker}`, async () => (await document()).includes(marker));
        const synced = running.eventAfter(saved, /Syncing \d+ files? for/);
        edits.push({ saveToServingMs: performance.now() - saved, watcherMs: synced && synced.at - saved });
      }
      return edits;
    };
    const syncStarted = performance.now();
    const serviceEdits = await syncedEdits('service');
    const sharedEdits = await syncedEdits('shared');
    const buildsDuringSync = builds(syncStarted);
    const afterSync = await deployed();

    // A manifest edit: no sync rule takes it, so skaffold rebuilds the image and rolls the Pods; the new image
    // carries the sources as they are now (the last edits still served).
    const lastMarker = `shared edit ${EDITS_IN_A_ROW} of run ${runId}`;
    const saved = await save(EDITS.manifest, `manifest edit of run ${runId}`);
    await whileRunning('the account api rolled out with the rebuilt image and serving', async () => {
      const now = await deployed();
      return now.image !== afterSync.image && (await document()).includes(lastMarker);
    });
    const served = performance.now();
    const buildStarted = running.eventAfter(saved, BUILD_STARTED);
    const built = running.eventAfter(saved, /Build \[frequency-gateway\] succeeded/);
    const stabilized = running.eventAfter(saved, /Deployments stabilized/);
    return {
      forwards: new Map(running.forwards),
      startToServingMs: firstServing - started,
      serviceEdits,
      sharedEdits,
      rebuild: {
        saveToServingMs: served - saved,
        phasesMs: {
          watcher: buildStarted && buildStarted.at - saved,
          build: buildStarted && built && built.at - buildStarted.at,
          rollout: built && stabilized && stabilized.at - built.at,
          forward: stabilized && served - stabilized.at,
        },
      },
      vendorBundle,
      documentBefore: {
        texts: before.includes('The MSA id and handle of an account key') && before.includes('The request is invalid'),
        marker: before.includes(runId),
      },
      deployed: { before: deployedBefore, afterSync, afterRebuild: await deployed() },
      buildsDuringSync,
      buildsForManifest: builds(saved),
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
