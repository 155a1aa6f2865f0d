// `make dev` reloads a saved file: only the component that runs it restarts, and a save that does not compile
// leaves the last good process answering. The runner runs a copy of services/ and shared/ (--root), so that the
// edits here never reach the files other suites run.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitUntil } from '@frequency-gateway/devstack';
import { DEV_PORTS, startDevRunner, type DevComponent, type DevRunner } from '../src/devRunner.js';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const ROUTES = 'services/content-publishing/src/api/assetRoutes.ts';
const SUMMARY = "summary: 'Upload assets, streamed to IPFS'";
const COMPONENTS = Object.keys(DEV_PORTS).filter((name) => name.includes('-')) as DevComponent[];

/**
 * A copy of the product sources the runner can run: services/ and shared/ copied, node_modules made of links to
 * the repository's, but for the workspace packages of the copy, which link into the copy.
 */
function copyOfSources(): string {
  const root = mkdtempSync(join(tmpdir(), 'dev-reload-'));
  const copied = ['services', 'shared'];
  for (const top of copied)
    cpSync(join(repository, top), join(root, top), {
      recursive: true,
      filter: (source) => !/\/dist(\/|$)/.test(source),
    });
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.base.json'])
    cpSync(join(repository, file), join(root, file));
  mkdirSync(join(root, 'node_modules', '@frequency-gateway'), { recursive: true });
  for (const name of readdirSync(join(repository, 'node_modules')))
    if (name !== '@frequency-gateway')
      symlinkSync(join(repository, 'node_modules', name), join(root, 'node_modules', name));
  for (const top of copied)
    for (const name of readdirSync(join(root, top)))
      symlinkSync(join(root, top, name), join(root, 'node_modules', '@frequency-gateway', name));
  return root;
}

describe('make dev reloads', () => {
  let root: string;
  let runner: DevRunner;
  const startedAt = async (component: DevComponent) =>
    ((await (await fetch(`${runner.base(component)}/healthz`)).json()) as { startedAt: string }).startedAt;
  const startTimes = async () =>
    Object.fromEntries(await Promise.all(COMPONENTS.map(async (name) => [name, await startedAt(name)])));
  const summaries = async () =>
    JSON.stringify(await (await fetch(`${runner.base('content-publishing-api')}/docs/swagger.json`)).json());
  const save = (from: string, to: string) => {
    const path = join(root, ROUTES);
    writeFileSync(path, readFileSync(path, 'utf8').replace(from, to));
  };
  const said = (text: string) => async () => runner.output.find((line) => line.includes(text));

  beforeAll(async () => {
    root = copyOfSources();
    runner = await startDevRunner(['--root', root]);
    await runner.up;
    await waitUntil(said('watching services/*/src'), 10_000, 'the runner to watch the sources');
  }, 300_000);

  afterAll(async () => {
    runner?.interrupt();
    await runner?.exited;
    rmSync(root, { recursive: true, force: true });
  });

  it('restarts only the component that runs a saved file; a save that does not load keeps the old one', async () => {
    const before = await startTimes();

    save(SUMMARY, "summary: 'Upload assets, streamed to IPFS (saved once)'");
    await waitUntil(async () => (await summaries()).includes('(saved once)'), 90_000, 'the saved summary');
    const line = await waitUntil(said('restarted content-publishing-api'), 60_000, 'the reload line');
    expect(line).toContain(`(${ROUTES} changed) in `);
    const after = await startTimes();
    expect(after['content-publishing-api']).not.toBe(before['content-publishing-api']);
    expect({ ...after, 'content-publishing-api': '' }).toEqual({ ...before, 'content-publishing-api': '' });

    // A syntax error: reported, and the last good process keeps answering.
    save("summary: 'Upload assets, streamed to IPFS (saved once)',", "summary: 'Upload assets, (saved twice)' +,");
    await waitUntil(said('content-publishing-api keeps running its last good code'), 60_000, 'the load error');
    expect((await fetch(`${runner.base('content-publishing-api')}/readyz`)).status).toBe(200);
    expect(await summaries()).toContain('(saved once)');
    expect(await startTimes()).toEqual(after);

    // The next good save recovers.
    save("summary: 'Upload assets, (saved twice)' +,", "summary: 'Upload assets, streamed to IPFS (saved twice)',");
    await waitUntil(async () => (await summaries()).includes('(saved twice)'), 90_000, 'the fixed summary');
    const recovered = await startTimes();
    expect(recovered['content-publishing-api']).not.toBe(after['content-publishing-api']);
    expect({ ...recovered, 'content-publishing-api': '' }).toEqual({ ...before, 'content-publishing-api': '' });
  }, 300_000);
});
