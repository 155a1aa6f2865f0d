// The development image's vendor bundles (the Dockerfile's `dev` stage runs this once, after the sources): for each
// service, every package its code imports from node_modules, bundled by esbuild into one module. Node then loads one
// file instead of resolving and reading thousands (@polkadot/api alone is ~1,500 modules), so a component that
// restarts after a synced edit starts in a fraction of the time. The gateway's own modules stay separate files,
// which dev-runner.mjs recompiles one at a time; dev-vendor-hooks.mjs sends their imports of those packages to the
// bundle. The production image does not use it.
//   node_modules/.dev-vendor/<service>/bundle.mjs   every package, each as one namespace (v0, v1, …)
//   node_modules/.dev-vendor/<service>/<n>.mjs      one module per package specifier, exporting its names
//   node_modules/.dev-vendor/<service>/map.json     specifier → module URL
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = process.env.DEV_RUNNER_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
/** Every service under services/ (each has a dist/main.js). */
const SERVICES = readdirSync(join(root, 'services')).sort();

/** The specifiers a service's code imports that resolve into node_modules (its workspace packages are followed). */
async function packagesOf(service) {
  const specifiers = new Set();
  await build({
    entryPoints: [join(root, 'services', service, 'dist', 'main.js')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    outdir: join(root, 'node_modules', '.dev-vendor'),
    logLevel: 'error',
    plugins: [
      {
        name: 'packages',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, async (args) => {
            if (args.pluginData?.inner || args.path.startsWith('node:')) return undefined;
            const resolved = await build.resolve(args.path, {
              kind: args.kind,
              importer: args.importer,
              resolveDir: args.resolveDir,
              pluginData: { inner: true },
            });
            if (resolved.errors.length > 0 || !resolved.path.includes('/node_modules/')) return resolved;
            specifiers.add(args.path);
            return { path: args.path, external: true };
          });
        },
      },
    ],
  });
  return [...specifiers].sort();
}

const LOCATION = /\bimport\.meta\.url\b|\b__(dirname|filename)\b/;
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A bundled module still finds its files: a CommonJS module's __dirname and __filename, and any module's
 * import.meta.url, are those of its file in node_modules (a module that declares its own __dirname keeps it). Only the
 * files that name them go through the plugin.
 */
function ownLocation(files) {
  return {
    name: 'own-location',
    setup(build) {
      if (files.length === 0) return;
      build.onLoad({ filter: new RegExp(`^(${files.map(escape).join('|')})$`) }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        let contents = text.replace(/\bimport\.meta\.url\b/g, JSON.stringify(pathToFileURL(args.path).href));
        if (/\b__(dirname|filename)\b/.test(text) && !/\b(const|let|var|function)\s+__(dirname|filename)\b/.test(text))
          contents = `var __filename = ${JSON.stringify(args.path)}, __dirname = ${JSON.stringify(dirname(args.path))};\n${contents}`;
        return { contents, loader: 'js', resolveDir: dirname(args.path) };
      });
    },
  };
}

async function vendor(service) {
  const started = performance.now();
  const out = join(root, 'node_modules', '.dev-vendor', service);
  const list = await packagesOf(service);
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const options = {
    stdin: {
      contents:
        list.map((specifier, index) => `import * as v${index} from ${JSON.stringify(specifier)};`).join('\n') +
        `\nexport { ${list.map((_, index) => `v${index}`).join(', ')} };\n`,
      resolveDir: root,
      sourcefile: `${service}-vendor.mjs`,
      loader: 'js',
    },
    absWorkingDir: root,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(out, 'bundle.mjs'),
    logLevel: 'error',
    // CommonJS code in an ES module bundle: `require` of Node's modules (and of a path given to eval) works as in
    // the module's own file.
    banner: {
      js: "import { createRequire as __vendorRequire } from 'node:module'; const require = __vendorRequire(import.meta.url);",
    },
  };
  // The files the bundle takes in, then the bundle with those that name their own location rewritten.
  const { metafile } = await build({ ...options, write: false, metafile: true });
  const located = Object.keys(metafile.inputs)
    .map((input) => join(root, input))
    .filter((file) => /[\\/]node_modules[\\/].*\.(c|m)?js$/.test(file) && LOCATION.test(readFileSync(file, 'utf8')));
  await build({ ...options, plugins: [ownLocation(located)] });
  // One module per specifier, exporting the names its namespace has once loaded (any name: `catch` is one of zod's),
  // read in a process of its own, as a component loads the bundle.
  const loaded = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const bundle = await import(${JSON.stringify(pathToFileURL(join(out, 'bundle.mjs')).href)});\n` +
        'process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(bundle).map(([k, v]) => [k, Object.keys(v)]))));\nprocess.exit(0);',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (loaded.status !== 0) throw new Error(`the ${service} bundle does not load:\n${loaded.stderr}`);
  const names = JSON.parse(loaded.stdout);
  const map = {};
  list.forEach((specifier, index) => {
    const lines = [`import { v${index} as namespace } from './bundle.mjs';`];
    names[`v${index}`].forEach((name, n) => {
      if (name === 'default') lines.push('export default namespace.default;');
      else
        lines.push(
          `const name${n} = namespace[${JSON.stringify(name)}];`,
          `export { name${n} as ${JSON.stringify(name)} };`,
        );
    });
    writeFileSync(join(out, `${index}.mjs`), `${lines.join('\n')}\n`);
    map[specifier] = pathToFileURL(join(out, `${index}.mjs`)).href;
  });
  writeFileSync(join(out, 'map.json'), `${JSON.stringify(map, null, 2)}\n`);
  process.stdout.write(
    `dev-vendor: ${service}: ${list.length} packages in ${Math.round(performance.now() - started)} ms\n`,
  );
}

// `node dev/images/dev-vendor.mjs [service …]`: those services' bundles, or every service's.
for (const service of process.argv.length > 2 ? process.argv.slice(2) : SERVICES) await vendor(service);
process.exit(0);
