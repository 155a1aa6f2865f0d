// The development image's runner of an api or a worker (dev/images/dev-entrypoint): the component runs from its
// compiled dist/ under `node --watch`, which restarts it when a module it loaded changes (its packages come from the
// service's vendor bundle: dev-vendor.mjs); this process turns a saved TypeScript source (skaffold's file sync writes
// it into the container) into that module. Each changed `<group>/<package>/src/<path>.ts` of services/ and shared/
// is transpiled on its own, as the build's isolated modules allow, to `<group>/<package>/dist/<path>.js`, and a
// `.lua` Redis script is copied beside it: only the components that import the file restart. A source that does not
// transpile is reported and changes nothing, so the last good process keeps answering until the next good save.
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

/** The image's /app (another tree's root with DEV_RUNNER_ROOT: tools/test/devRunner.test.ts). */
const root = process.env.DEV_RUNNER_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
const say = (line) => process.stdout.write(`dev-runner: ${line}\n`);

const component = spawn(
  process.execPath,
  [
    '--watch',
    '--watch-preserve-output',
    // The service's packages from its vendor bundle (dev-vendor.mjs), when the image has one.
    '--import',
    fileURLToPath(new URL('dev-vendor-hooks.mjs', import.meta.url)),
    'bin/gateway.js',
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => component.kill(signal));
component.once('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
// The component never outlives its runner.
process.once('exit', () => component.kill('SIGKILL'));

/** Writes the compiled form of one source file; a file that is gone or does not transpile changes nothing. */
function compile(group, relative) {
  const match = /^([^/]+)\/src\/(.+)\.(ts|lua)$/.exec(relative);
  if (!match || relative.endsWith('.d.ts')) return;
  const [, name, path, kind] = match;
  const source = join(root, group, relative);
  const target = join(root, group, name, 'dist', `${path}.${kind === 'ts' ? 'js' : 'lua'}`);
  const started = performance.now();
  try {
    mkdirSync(dirname(target), { recursive: true });
    if (kind === 'lua') copyFileSync(source, target);
    else {
      const { code } = transformSync(readFileSync(source, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'es2023',
        sourcefile: source,
        sourcemap: 'inline',
      });
      writeFileSync(target, code);
    }
    say(
      `${group}/${relative} → ${group}/${name}/dist/${path}.${kind === 'ts' ? 'js' : 'lua'} (${Math.round(performance.now() - started)} ms)`,
    );
  } catch (error) {
    if (error.code === 'ENOENT') return;
    say(`${group}/${relative} not compiled, the running code is unchanged: ${error.message}`);
  }
}

// A save arrives as several events (a sync writes the file through tar, which replaces it): each file is compiled
// once they settle. Every directory under a package's src/ is watched on its own, so that a file replaced by a new
// one (tar, an editor's atomic save) is still seen; a directory made later is watched from then on.
const pending = new Map();
const watched = new Set();
function watchTree(directory) {
  if (watched.has(directory)) return;
  let entries;
  try {
    entries = readdirSync(directory, { withFileTypes: true });
  } catch {
    return;
  }
  watched.add(directory);
  watch(directory, (_event, name) => {
    if (!name) return;
    const path = join(directory, name);
    if (!/\.(ts|lua)$/.test(name)) {
      // statSync throws when the entry went away meanwhile (a temporary file renamed over a source).
      if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) watchTree(path);
      return;
    }
    clearTimeout(pending.get(path));
    pending.set(
      path,
      setTimeout(() => {
        pending.delete(path);
        const [group, ...rest] = relative(root, path).split(sep);
        compile(group, rest.join('/'));
      }, 50),
    );
  });
  for (const entry of entries) if (entry.isDirectory()) watchTree(join(directory, entry.name));
}
for (const group of ['services', 'shared']) {
  for (const name of existsSync(join(root, group)) ? readdirSync(join(root, group)) : [])
    watchTree(join(root, group, name, 'src'));
}
