// One jest configuration; each workspace package is a project so that `make test` runs them all
// and `jest --selectProjects platform` runs one.
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
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  ...extra,
});

/** @type {import('jest').Config} */
export default {
  projects: [
    project('platform', '<rootDir>/shared/platform'),
    project('devstack', '<rootDir>/shared/devstack'),
    project('devchain', '<rootDir>/shared/devchain'),
    project('chain', '<rootDir>/shared/chain'),
    project('storage', '<rootDir>/shared/storage'),
    project('webhooks', '<rootDir>/shared/webhooks'),
    project('dsnp', '<rootDir>/shared/dsnp'),
    project('account', '<rootDir>/services/account'),
    project('content-publishing', '<rootDir>/services/content-publishing'),
    project('content-watcher', '<rootDir>/services/content-watcher'),
    project('tools', '<rootDir>/tools'),
    project('e2e', '<rootDir>/e2e', { testPathIgnorePatterns: ['/node_modules/', '/dist/', '<rootDir>/cluster/'] }),
    // The chart in the project's local Kubernetes (root; slow by nature: it builds the image and runs a release).
    project('cluster', '<rootDir>/e2e/cluster'),
  ],
  testTimeout: 30_000,
  // @polkadot/api keeps a 1.75 s unsubscribe timer after disconnect; the process still exits on its own.
  openHandlesTimeout: 3_000,
  reporters: ['default', '<rootDir>/tools/jestSummary.js'],
};
