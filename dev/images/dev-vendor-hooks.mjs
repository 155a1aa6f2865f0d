// `node --import dev/images/dev-vendor-hooks.mjs bin/gateway.js <service> <role>`: the gateway's own modules import
// their packages from the service's vendor bundle that dev-vendor.mjs made (node_modules/.dev-vendor/<service>);
// everything else resolves as usual, and so does a specifier the bundle lacks (an import a synced edit added).
// Without bundles (another tree, a service without one) it changes nothing.
import { existsSync, readFileSync } from 'node:fs';
import { register } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';

let map = {};
let own = [];

if (isMainThread) {
  const root = process.env.DEV_RUNNER_ROOT ?? fileURLToPath(new URL('../..', import.meta.url));
  // `node --import … bin/gateway.js <service> <role>`: the bundle of that service.
  const file = join(root, 'node_modules', '.dev-vendor', process.argv[2] ?? '', 'map.json');
  if (existsSync(file)) {
    const prefixes = ['services', 'shared'].map((group) => pathToFileURL(join(root, group)).href + '/');
    const packages = JSON.parse(readFileSync(file, 'utf8'));
    register(import.meta.url, { data: { map: packages, own: prefixes } });
    process.stdout.write(
      `dev-vendor: ${process.argv[2]}: ${Object.keys(packages).length} packages from node_modules/.dev-vendor/${process.argv[2]}\n`,
    );
  }
}

/** Runs in the loader's thread: receives the map. */
export function initialize(data) {
  map = data.map;
  own = data.own;
}

export function resolve(specifier, context, next) {
  const target = Object.hasOwn(map, specifier) ? map[specifier] : undefined;
  const parent = context.parentURL ?? '';
  if (target && own.some((prefix) => parent.startsWith(prefix)) && !parent.includes('/node_modules/'))
    return { url: target, shortCircuit: true };
  return next(specifier, context);
}
