// `skaffold dev` against the local cluster, as a developer runs it (tools/skaffold dev at the repository root):
// in a namespace of its own and a temporary copy of the repository, it must build the image, install the chart
// with the dev profile, forward the three apis to loopback, and after a saved source change serve the change from
// a redeployed api. Prints the time from save to serving, with where it went.
// Needs: the local cluster (make cluster, root) and skaffold (tools/install-skaffold).
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
} from '../src/cluster/localCluster.js';
import { startSkaffoldDev, type SkaffoldDev } from '../src/cluster/skaffoldDev.js';

const APIS = [
  'frequency-gateway-account-api',
  'frequency-gateway-content-publishing-api',
  'frequency-gateway-content-watcher-api',
];
// A route summary the account api's OpenAPI document shows: the harmless change the test saves.
const EDITED_FILE = 'services/account/src/api/accountRoutes.ts';
const SUMMARY = 'The MSA id and handle of an account key';

const line = (name: string, value: string) => process.stdout.write(`${name.padEnd(44)} ${value}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

describe('skaffold dev on the local cluster', () => {
  let copy = '';
  let namespace = '';
  let skaffold: SkaffoldDev | undefined;

  /** Waits for `check` while skaffold runs; fails at once, with its output, if skaffold exits. */
  const whileRunning = async (what: string, check: () => Promise<boolean>, timeoutMs: number) => {
    const dev = skaffold!;
    await waitUntil(
      async () => dev.exitCode() !== null || (await check()),
      timeoutMs,
      () => {
        return `${what}; skaffold's last lines:\n${dev.output().split('\n').slice(-40).join('\n')}`;
      },
    );
    if (dev.exitCode() !== null)
      throw new Error(`skaffold dev exited with ${dev.exitCode()} while waiting for ${what}:\n${dev.output()}`);
  };
  const apiImage = async () =>
    kubectl([
      '-n',
      namespace,
      'get',
      'deployment',
      APIS[0]!,
      '-o',
      'jsonpath={.spec.template.spec.containers[0].image}',
    ]);

  beforeAll(async () => {
    await requireLocalCluster();
    const bin = join(homedir(), '.cache/frequency-gateway/bin');
    await Promise.all(['skaffold', 'helm3'].map((tool) => access(join(bin, tool)))).catch(() => {
      throw new Error(`skaffold and helm3 are missing from ${bin}: run tools/install-skaffold`);
    });
    // The repository as it is in the working tree (tracked and new files, not what git ignores).
    copy = await mkdtemp(join(tmpdir(), 'skaffold-dev-'));
    const files = await runCommand('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: REPOSITORY_ROOT,
    });
    for (const file of files.split('\0').filter(Boolean)) {
      await cp(join(REPOSITORY_ROOT, file), join(copy, file), { preserveTimestamps: true }).catch((error: unknown) => {
        // A tracked file deleted in the working tree.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      });
    }
    namespace = await createNamespace('fg-observe-skaffold');
  }, 120_000);

  afterAll(async () => {
    await skaffold?.stop();
    if (namespace) await deleteNamespace(namespace);
    if (copy) await rm(copy, { recursive: true, force: true });
  }, 180_000);

  it(
    'deploys the dev profile, forwards the apis, and serves a saved change from the redeployed api',
    async () => {
      const started = performance.now();
      skaffold = startSkaffoldDev(
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
      const dev = skaffold;

      // First deploy: every api answers /readyz through its forward.
      await whileRunning(
        'the three apis ready through their port-forwards',
        async () => {
          if (!APIS.every((api) => dev.forwards.has(api))) return false;
          const answers = await Promise.all(APIS.map((api) => fetchText(`${dev.forwards.get(api)}/readyz`)));
          return answers.every((answer) => answer?.status === 200);
        },
        20 * 60_000,
      );
      const firstServing = performance.now();
      for (const api of APIS) line(`skaffold dev: ${api.replace('frequency-gateway-', '')}`, dev.forwards.get(api)!);
      line('skaffold dev: start to serving', seconds(firstServing - started));
      const accountUrl = dev.forwards.get(APIS[0]!)!;
      const documentBefore = await fetchText(`${accountUrl}/docs/swagger.json`);
      expect(documentBefore?.status).toBe(200);
      expect(documentBefore?.body).toContain(SUMMARY);
      const imageBefore = await apiImage();

      // The change: a marker in a route summary, saved the way an editor does (the whole file rewritten).
      const marker = `edited by the skaffold suite ${randomBytes(4).toString('hex')}`;
      const source = await readFile(join(copy, EDITED_FILE), 'utf8');
      expect(source).toContain(`summary: '${SUMMARY}'`);
      expect(documentBefore?.body).not.toContain(marker);
      await writeFile(
        join(copy, EDITED_FILE),
        source.replace(`summary: '${SUMMARY}'`, `summary: '${SUMMARY} (${marker})'`),
      );
      const saved = performance.now();

      await whileRunning(
        'the account api to serve the saved change',
        async () => (await fetchText(`${accountUrl}/docs/swagger.json`))?.body.includes(marker) ?? false,
        20 * 60_000,
      );
      const serving = performance.now();

      // Served by a new rollout of the image skaffold rebuilt, and the other apis answer through their forwards.
      expect(await apiImage()).not.toBe(imageBefore);
      for (const api of APIS.slice(1)) expect((await fetchText(`${dev.forwards.get(api)}/readyz`))?.status).toBe(200);

      const buildStarted = dev.eventAfter(saved, /Generating tags|Checking cache|Building \[frequency-gateway\]/);
      const built = dev.eventAfter(saved, /Build \[frequency-gateway\] succeeded/);
      const stabilized = dev.eventAfter(saved, /Deployments stabilized/);
      line('bench skaffold dev: save to serving', seconds(serving - saved));
      if (buildStarted) line('  save to rebuild started (watcher)', seconds(buildStarted.at - saved));
      if (buildStarted && built) line('  image build and load', seconds(built.at - buildStarted.at));
      if (built && stabilized) line('  helm upgrade and rollout', seconds(stabilized.at - built.at));
      if (stabilized) line('  rolled out to served through the forward', seconds(serving - stabilized.at));
    },
    45 * 60_000,
  );
});
