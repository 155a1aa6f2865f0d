// One jest configuration; each workspace package is a project so that `make test` runs them all
// and `jest --selectProjects platform` runs one. `make test` runs the slow suites one at a time beside the others two
// at a time (tools/run-tests); plain `npm test` on two cores runs them in jest's own process (in band), one after the other, where
// the ESM module registries of 100-odd suites outgrow Node's default heap (a run died at suite 86 with "heap out
// of memory"): `npm test` gives it 8 GiB (package.json). The cluster, skaffold and KEDA suites share one cluster
// and run in band.
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript' },
      target: 'es2023',
      // Keep class fields with [[Define]] semantics identical to tsc's output.
      transform: { useDefineForClassFields: true },
    },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

/**
 * The fault, failover, fuzz and 1 GiB suites, minutes each and heavy: their own project, `slow`, so that a
 * package's suites run without them (`--selectProjects account`), they run alone (`--selectProjects slow`), and
 * `make test` runs them one at a time (tools/run-tests).
 */
const SLOW_SUITES = [
  'services/account/test/signUpFaults.test.ts',
  'services/account/test/stalledWorker.test.ts',
  'services/content-publishing/test/stalledWorker.test.ts',
  'services/content-publishing/test/pipelineFaults.test.ts',
  'services/content-publishing/test/uploadProcess.test.ts',
  'e2e/test/faults.test.ts',
  'e2e/test/fuzz.test.ts',
  'e2e/test/chainBehaviours.test.ts',
  'e2e/test/trustedReorgs.test.ts',
  'services/content-publishing/test/redisFailover.test.ts',
  'services/account/test/redisFailover.test.ts',
];
const escaped = (path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const project = (displayName, rootDir, extra = {}) => ({
  displayName,
  rootDir,
  testEnvironment: 'node',
  // Workspace packages resolve to their TypeScript sources through the "source" export condition.
  testEnvironmentOptions: { customExportConditions: ['source', 'node', 'node-addons'] },
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', ...SLOW_SUITES.map((suite) => `/${escaped(suite)}$`)],
  ...extra,
});

/** True when jest was started with `--selectProjects NAME` (or `=NAME`) naming this project. */
function selectsProject(name) {
  const args = process.argv;
  return args.some(
    (arg, index) =>
      arg === `--selectProjects=${name}` || (arg === name && args.slice(0, index).includes('--selectProjects')),
  );
}

/** @type {import('jest').Config} */
export default {
  projects: [
    project('platform', '<rootDir>/shared/platform'),
    project('devstack', '<rootDir>/dev/devstack'),
    project('devchain', '<rootDir>/dev/devchain'),
    project('runtime', '<rootDir>/dev/runtime', {
      testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/journeys/'],
    }),
    project('chain', '<rootDir>/shared/chain'),
    project('storage', '<rootDir>/shared/storage'),
    project('webhooks', '<rootDir>/shared/webhooks'),
    project('dsnp', '<rootDir>/shared/dsnp'),
    project('account', '<rootDir>/services/account'),
    project('content-publishing', '<rootDir>/services/content-publishing'),
    project('content-watcher', '<rootDir>/services/content-watcher'),
    project('chart', '<rootDir>/charts/test'),
    project('tools', '<rootDir>/tools'),
    project('e2e', '<rootDir>/e2e', {
      testPathIgnorePatterns: [
        '/node_modules/',
        '/dist/',
        '<rootDir>/cluster/',
        '<rootDir>/skaffold/',
        '<rootDir>/keda/',
        ...SLOW_SUITES.map((suite) => `/${escaped(suite)}$`),
      ],
    }),
    project('slow', '<rootDir>', {
      testMatch: SLOW_SUITES.map((suite) => `<rootDir>/${suite}`),
      testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    }),
    // Suites against the local Kubernetes cluster (make cluster, root): only when asked for by name,
    // `make test-cluster`, as they need the cluster and take minutes.
    ...(selectsProject('cluster') ? [project('cluster', '<rootDir>/e2e/cluster')] : []),
    // `dev/cluster/skaffold dev` in the local cluster, save to serving: `make test-skaffold` (.ci/run runs it after
    // the cluster suites).
    ...(selectsProject('skaffold') ? [project('skaffold', '<rootDir>/e2e/skaffold')] : []),
    // KEDA scaling a worker in the local cluster: `make test-keda` (KEDA's cold Go build takes about an hour, so CI
    // leaves it to developers' machines; docs/testing.md).
    ...(selectsProject('keda') ? [project('keda', '<rootDir>/e2e/keda')] : []),
    // Journeys against the real Frequency runtime under chopsticks: `make test-runtime` (the runtime's cold Rust
    // build takes longer than CI can spare; docs/real-runtime.md).
    ...(selectsProject('runtime-journeys') ? [project('runtime-journeys', '<rootDir>/dev/runtime/journeys')] : []),
  ],
  testTimeout: 30_000,
  // @polkadot/api keeps a 1.75 s unsubscribe timer after disconnect; the process still exits on its own.
  openHandlesTimeout: 3_000,
  reporters: ['default', '<rootDir>/tools/jestSummary.js'],
};
