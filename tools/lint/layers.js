// The layering of the repository, checked by ESLint (`npm run lint`): which package may import which, which
// third-party libraries belong to one package only, and where real dependencies are constructed. README.md's
// "Layout" says the same in prose; tools/test/layers.test.ts proves that a forbidden import fails. Import loops,
// between files or between the folders of a package's src/, are a property of the whole graph rather than of one
// file: tools/lint/cycles.js checks them, after ESLint in `npm run lint`.
//
// One table and one rule rather than a `no-restricted-imports` block per folder: ESLint does not merge the
// options of a rule across config blocks (the last block wins), so per-folder blocks would each have to repeat
// every restriction; and a relative path that leaves its package can only be judged once it is resolved.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Every workspace package: where it lives, whether it is production code (what the image runs) or a
 * developer's tool, and the workspace packages its production sources may import. Tests and benchmarks of a
 * production package may also import the dev packages (devstack, devchain); those of a dev package, its `testUses`.
 */
export const PACKAGES = {
  platform: { dir: 'shared/platform', production: true, uses: [] },
  dsnp: { dir: 'shared/dsnp', production: true, uses: [] },
  storage: { dir: 'shared/storage', production: true, uses: ['platform'] },
  webhooks: { dir: 'shared/webhooks', production: true, uses: ['platform'] },
  chain: { dir: 'shared/chain', production: true, uses: ['platform'] },
  account: { dir: 'services/account', production: true, uses: ['platform', 'chain', 'webhooks'], service: true },
  'content-publishing': {
    dir: 'services/content-publishing',
    production: true,
    uses: ['platform', 'chain', 'storage', 'dsnp', 'webhooks'],
    service: true,
  },
  'content-watcher': {
    dir: 'services/content-watcher',
    production: true,
    uses: ['platform', 'chain', 'storage', 'dsnp', 'webhooks'],
    service: true,
  },
  // Its SIWF signer (a user's wallet, for the tests of account and e2e) signs over shared/chain's payload codecs;
  // its gateway harness runs the devchain as a process.
  devstack: { dir: 'dev/devstack', production: false, uses: ['chain', 'devchain'] },
  // Its tests wait with devstack's polling helper (its sources never import devstack: no cycle).
  devchain: { dir: 'dev/devchain', production: false, uses: ['chain'], testUses: ['devstack'] },
  // It reads the batch files the gateway published with dsnp's reader.
  e2e: { dir: 'e2e', production: false, uses: ['chain', 'webhooks', 'dsnp', 'devstack', 'devchain'] },
  // The chart's own tests: they render it with Helm and compare it with every component's definition.
  chart: { dir: 'charts/test', production: false, uses: ['platform', 'devstack', 'tools'] },
  tools: {
    dir: 'tools',
    production: false,
    // The configuration reference and `make dev` read every component's definition.
    uses: ['platform', 'storage', 'devstack', 'devchain', 'account', 'content-publishing', 'content-watcher'],
  },
};

const DEV_PACKAGES = ['devstack', 'devchain'];

/** Libraries of the Frequency chain client: only shared/chain's production code imports them. */
const CHAIN_LIBRARIES = /^@(polkadot|frequency-chain)\//;

/** Libraries of an HTTP server: shared/chain knows nothing of HTTP. */
const HTTP_LIBRARIES = /^(express|helmet|swagger-ui-express|@bull-board\/.*)$/;

/** What shared/platform's http/ module exports (errors, routes, the app): shared/chain imports none of it. */
function platformHttpNames() {
  const folder = path.join(ROOT, 'shared/platform/src/http');
  const names = new Set();
  for (const file of readdirSync(folder).filter((name) => name.endsWith('.ts'))) {
    const text = readFileSync(path.join(folder, file), 'utf8');
    for (const [, name] of text.matchAll(
      /^export (?:declare )?(?:async )?(?:const|function|class|interface|type|enum) (\w+)/gm,
    ))
      names.add(name);
  }
  return names;
}

/**
 * Files whose break of a rule is known and being removed in a branch of its own: each entry names the file and
 * the rules it still breaks, so a new break anywhere else fails at once. None today.
 */
const PENDING = {};

const pending = (file, rule) => PENDING[path.relative(ROOT, file)]?.includes(rule) ?? false;

/** The package a file belongs to, and which part of it: src (production), or dev code (tests, benchmarks). */
function locate(file) {
  const relative = path.relative(ROOT, file);
  for (const [name, info] of Object.entries(PACKAGES)) {
    if (relative !== info.dir && !relative.startsWith(`${info.dir}/`)) continue;
    const inside = relative.slice(info.dir.length + 1);
    const source = inside.startsWith('src/');
    const half = inside.startsWith('src/api/') ? 'api' : inside.startsWith('src/worker/') ? 'worker' : undefined;
    return { name, info, inside, production: info.production && source, source, half };
  }
  return undefined;
}

const workspaceName = (specifier) => specifier.match(/^@frequency-gateway\/([^/]+)/)?.[1];

function checkImport(context, node, specifier) {
  const file = context.filename;
  const from = locate(file);
  if (!from) return;
  const report = (rule, message) => {
    if (!pending(file, rule)) context.report({ node, message });
  };

  if (specifier.startsWith('.')) {
    const target = locate(path.resolve(path.dirname(file), specifier));
    if (!target || target.name !== from.name) {
      const into = target ? `@frequency-gateway/${target.name}` : 'outside any package';
      return report(
        'package-boundary',
        `'${specifier}' reaches into ${into} by path: a package is imported by its name, and only what its index exports`,
      );
    }
    if (from.source && !target.source)
      return report('package-boundary', `'${specifier}': production code never imports tests or benchmarks`);
    if (from.half && target.half && from.half !== target.half)
      return report(
        'component-halves',
        `'${specifier}': a service's ${from.half} never imports its ${target.half}; what both need lives in its src/ root`,
      );
    return;
  }

  const workspace = workspaceName(specifier);
  if (workspace) {
    if (workspace === from.name) return;
    const target = PACKAGES[workspace];
    if (from.info.service && target?.service)
      return report('services', `${from.name} imports ${specifier}: a service never imports another service`);
    // Sources import what the package uses; its tests and benchmarks may import the dev packages as well.
    const allowed = from.source
      ? from.info.uses
      : [...from.info.uses, ...(from.info.production ? DEV_PACKAGES : (from.info.testUses ?? []))];
    if (!allowed.includes(workspace)) {
      const dev = !target?.production && from.production;
      return report(
        dev ? 'dev-packages' : 'workspace-layers',
        dev
          ? `${from.name} production code imports ${specifier}: dev packages are for tests, benchmarks and tools only`
          : `${from.name} may not import ${specifier} (it uses ${from.info.uses.join(', ') || 'no workspace package'}); see README.md "Layout"`,
      );
    }
    if (from.name === 'chain' && workspace === 'platform') {
      const http = platformHttpNames();
      for (const specifierNode of node.specifiers ?? []) {
        const imported = specifierNode.imported?.name;
        if (imported && http.has(imported))
          report(
            'chain-http',
            `shared/chain imports ${imported} from the platform's HTTP layer: shared/chain knows nothing of HTTP`,
          );
      }
    }
    return;
  }

  if (CHAIN_LIBRARIES.test(specifier) && from.production && from.name !== 'chain')
    return report(
      'chain-library',
      `${from.name} imports ${specifier}: only shared/chain uses the chain client's libraries (add what you need to it)`,
    );
  if (HTTP_LIBRARIES.test(specifier) && from.name === 'chain')
    return report('chain-http', `shared/chain imports ${specifier}: shared/chain knows nothing of HTTP`);
}

const importBoundaries = {
  meta: { type: 'problem', docs: { description: 'Imports follow the layering of README.md "Layout"' }, schema: [] },
  create(context) {
    const check = (node) => {
      const source = node.source;
      if (source?.type === 'Literal' && typeof source.value === 'string') checkImport(context, node, source.value);
    };
    return {
      ImportDeclaration: check,
      ExportNamedDeclaration: check,
      ExportAllDeclaration: check,
      ImportExpression: check,
    };
  },
};

/**
 * Composition roots: the only production files that construct real dependencies (connections to Redis and
 * the chain, chain queries) and hand them down. shared/platform's component runtime is the composition root
 * every component shares; the defining modules construct what they define.
 */
const COMPOSITION_ROOTS = [
  'services/*/src/api/component.ts',
  'services/*/src/worker/component.ts',
  'services/*/src/main.ts',
  'shared/platform/src/component/runtime.ts',
];

/**
 * What only a composition root constructs, and the modules that may as well: the one that defines it, and
 * shared/platform's queues and intake relay, which open the connections of their own kinds (blocking,
 * fail-fast) from the Redis URL the root hands them.
 */
const CONSTRUCTED = [
  {
    selector: "NewExpression[callee.name='ChainQueries']",
    what: 'new ChainQueries',
    // openChain builds each connection's queries once; a view at the finalized block is built by the class.
    allowedIn: ['shared/chain/src/connection.ts', 'shared/chain/src/queries.ts'],
  },
  {
    selector: "CallExpression[callee.name='openChain']",
    what: 'openChain',
    allowedIn: ['shared/chain/src/connection.ts'],
  },
  {
    selector: "CallExpression[callee.name='connectChain']",
    what: 'connectChain',
    // connectAsProvider is a factory of connections as well.
    allowedIn: ['shared/chain/src/connection.ts', 'shared/chain/src/providerChain.ts'],
  },
  {
    selector: "CallExpression[callee.name='openRedis']",
    what: 'openRedis',
    allowedIn: [
      'shared/platform/src/redis/connection.ts',
      'shared/platform/src/queues/jobQueues.ts',
      'shared/platform/src/requests/relay.ts',
    ],
  },
  {
    selector: "NewExpression[callee.name='Redis']",
    what: 'new Redis',
    allowedIn: ['shared/platform/src/redis/connection.ts'],
  },
];

/** no-restricted-syntax for one file: every construction it may not make. */
const constructionRule = (file) => [
  'error',
  ...CONSTRUCTED.filter(({ allowedIn }) => !allowedIn.includes(file)).map(({ selector, what }) => ({
    selector,
    message: `${what}: only a composition root (src/api/component.ts, src/worker/component.ts, src/main.ts) constructs real dependencies; take it (or a factory) as an argument`,
  })),
];

const productionSources = Object.values(PACKAGES)
  .filter((info) => info.production)
  .map((info) => `${info.dir}/src/**/*.ts`);

/** The flat-config blocks that enforce the layering. */
export function layerRules() {
  const pendingConstruction = Object.entries(PENDING)
    .filter(([, rules]) => rules.includes('construction'))
    .map(([file]) => file);
  const allowed = [...new Set(CONSTRUCTED.flatMap(({ allowedIn }) => allowedIn))];
  return [
    {
      files: ['**/*.ts', '**/*.js'],
      plugins: { layers: { rules: { 'import-boundaries': importBoundaries } } },
      rules: { 'layers/import-boundaries': 'error' },
    },
    {
      files: productionSources,
      ignores: [...COMPOSITION_ROOTS, ...pendingConstruction, ...allowed],
      rules: { 'no-restricted-syntax': constructionRule('') },
    },
    // A module allowed one construction still may not make the others.
    ...allowed.map((file) => ({ files: [file], rules: { 'no-restricted-syntax': constructionRule(file) } })),
  ];
}
