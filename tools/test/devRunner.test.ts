// The development image's runner (dev/images/dev-runner.mjs), on a small tree of its own: the component's packages
// come from its vendor bundle; a saved source is compiled into dist/ and restarts the component only when the
// component imports it; a source that does not compile changes nothing and the running process keeps going.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { waitUntil } from '@frequency-gateway/devstack';

const RUNNER = fileURLToPath(new URL('../../dev/images/dev-runner.mjs', import.meta.url));

let tree: string;
let runner: ChildProcess;
let output = '';
const write = (path: string, text: string) => {
  mkdirSync(dirname(join(tree, path)), { recursive: true });
  writeFileSync(join(tree, path), text);
};
/** Saves as tar (skaffold's file sync) and many editors do: a new file renamed over the old one. */
const replace = (path: string, text: string) => {
  writeFileSync(join(tree, `${path}.new`), text);
  renameSync(join(tree, `${path}.new`), join(tree, path));
};
const count = (text: string) => output.split(text).length - 1;

beforeAll(async () => {
  tree = mkdtempSync(join(tmpdir(), 'dev-runner-'));
  // The component imports services/demo (built), never services/other.
  write(
    'bin/gateway.js',
    "const { greeting } = await import('../services/demo/dist/greeting.js');\n" +
      "const { origin } = await import('../services/demo/dist/packaged.js');\n" +
      "console.log(`started ${process.argv.slice(2).join(' ')}: ${greeting} (package from ${origin})`);\n" +
      'setInterval(() => {}, 60_000);\n',
  );
  // The service's vendor bundle (dev-vendor.mjs makes it in the image): its package is nowhere in node_modules, so
  // only the runner's hooks can resolve it.
  write('services/demo/dist/packaged.js', "export { origin } from 'demo-package';\n");
  write('node_modules/.dev-vendor/demo/0.mjs', "export const origin = 'the vendor bundle';\n");
  write(
    'node_modules/.dev-vendor/demo/map.json',
    JSON.stringify({ 'demo-package': pathToFileURL(join(tree, 'node_modules/.dev-vendor/demo/0.mjs')).href }),
  );
  write('services/demo/src/greeting.ts', "export const greeting: string = 'one';\n");
  write('services/demo/dist/greeting.js', "export const greeting = 'one';\n");
  write('services/other/src/unused.ts', 'export const unused = 1;\n');
  write('services/other/dist/unused.js', 'export const unused = 1;\n');
  runner = spawn(process.execPath, [RUNNER, 'demo', 'api'], {
    env: { ...process.env, DEV_RUNNER_ROOT: tree },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  for (const stream of [runner.stdout!, runner.stderr!]) stream.on('data', (chunk: Buffer) => (output += chunk));
  await waitUntil(
    async () => output.includes('started demo api: one'),
    20_000,
    () => `the first start:\n${output}`,
  );
});

afterAll(() => {
  runner?.kill('SIGTERM');
  rmSync(tree, { recursive: true, force: true });
});

test("the component's packages come from its service's vendor bundle", () => {
  expect(output).toContain('dev-vendor: demo: 1 packages from node_modules/.dev-vendor/demo');
  expect(output).toContain('started demo api: one (package from the vendor bundle)');
});

test('a saved source the component imports is compiled into dist/ and the component restarts with it', async () => {
  replace('services/demo/src/greeting.ts', "const word: string = 'two';\nexport const greeting = word;\n");
  await waitUntil(
    async () => output.includes('started demo api: two'),
    20_000,
    () => `the restart:\n${output}`,
  );
  expect(output).toMatch(/dev-runner: services\/demo\/src\/greeting\.ts → services\/demo\/dist\/greeting\.js/);
  // Types are gone from the compiled module.
  expect(readFileSync(join(tree, 'services/demo/dist/greeting.js'), 'utf8')).not.toContain(': string');
});

test('a saved source the component does not import is compiled, and nothing restarts', async () => {
  const starts = count('started demo api');
  replace('services/other/src/unused.ts', 'export const unused: number = 2;\n');
  await waitUntil(
    async () => output.includes('services/other/dist/unused.js'),
    20_000,
    () => output,
  );
  expect(readFileSync(join(tree, 'services/other/dist/unused.js'), 'utf8')).toContain('unused = 2');
  // A later, imported change restarts the component once: nothing restarted for the other file in between.
  replace('services/demo/src/greeting.ts', "export const greeting = 'three';\n");
  await waitUntil(
    async () => output.includes('started demo api: three'),
    20_000,
    () => output,
  );
  expect(count('started demo api')).toBe(starts + 1);
});

test('a source that does not compile is reported, and the running component keeps going', async () => {
  const starts = count('started demo api');
  const before = readFileSync(join(tree, 'services/demo/dist/greeting.js'), 'utf8');
  replace('services/demo/src/greeting.ts', 'export const greeting = ;\n');
  await waitUntil(
    async () => output.includes('not compiled, the running code is unchanged'),
    20_000,
    () => output,
  );
  expect(readFileSync(join(tree, 'services/demo/dist/greeting.js'), 'utf8')).toBe(before);
  expect(runner.exitCode).toBeNull();
  // The next good save is served.
  replace('services/demo/src/greeting.ts', "export const greeting = 'four';\n");
  await waitUntil(
    async () => output.includes('started demo api: four'),
    20_000,
    () => output,
  );
  expect(count('started demo api')).toBe(starts + 1);
});
