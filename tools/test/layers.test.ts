// The layering of README.md "Layout" is checked by `npm run lint`: each forbidden import or construction below
// fails with the repository's own ESLint configuration, and the repository as it is passes.
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { layerRules } from '../lint/layers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The repository's configuration (eslint.config.js), as `npm run lint` runs it. */
const lint = new ESLint({ cwd: root });

/** The messages of the layer rules for `code` placed at `path` (the file need not exist). */
async function layerProblems(path: string, code: string): Promise<string[]> {
  const [result] = await lint.lintText(code, { filePath: `${root}${path}` });
  return result!.messages
    .filter((message) => message.ruleId === 'layers/import-boundaries' || message.ruleId === 'no-restricted-syntax')
    .map((message) => message.message);
}

test.each([
  [
    'a service imports another service',
    'services/content-watcher/src/worker/x.ts',
    "export { accountApi } from '@frequency-gateway/account';",
    /a service never imports another service/,
  ],
  [
    "a service's test reaches into another service's test support by path",
    'services/content-watcher/test/x.test.ts',
    "export { startPipeline } from '../../content-publishing/test/support/pipeline.js';",
    /reaches into @frequency-gateway\/content-publishing by path/,
  ],
  [
    'shared/platform imports the chain package',
    'shared/platform/src/requests/x.ts',
    "export { ChainQueries } from '@frequency-gateway/chain';",
    /platform may not import @frequency-gateway\/chain/,
  ],
  [
    'shared/platform imports the chain client',
    'shared/platform/src/x.ts',
    "export { u8aToHex } from '@polkadot/util';",
    /only shared\/chain uses the chain client's libraries/,
  ],
  [
    'a service imports the chain client',
    'services/account/src/api/x.ts',
    "export { options } from '@frequency-chain/api-augment';",
    /only shared\/chain uses the chain client's libraries/,
  ],
  [
    'shared/chain throws an HTTP error',
    'shared/chain/src/x.ts',
    "import { serviceUnavailable } from '@frequency-gateway/platform';\nexport const fail = () => serviceUnavailable('x');",
    /shared\/chain imports serviceUnavailable from the platform's HTTP layer/,
  ],
  [
    'shared/chain imports express',
    'shared/chain/src/x.ts',
    "export { Router } from 'express';",
    /shared\/chain knows nothing of HTTP/,
  ],
  [
    'production code imports a dev package',
    'services/account/src/worker/x.ts',
    "export { startRedisServer } from '@frequency-gateway/devstack';",
    /dev packages are for tests, benchmarks and tools only/,
  ],
  [
    "the devchain's sources import devstack, which runs the devchain (a cycle)",
    'dev/devchain/src/x.ts',
    "export { waitUntil } from '@frequency-gateway/devstack';",
    /devchain may not import @frequency-gateway\/devstack/,
  ],
  [
    "a service's worker imports its api",
    'services/account/src/worker/x.ts',
    "export { accountApi } from '../api/component.js';",
    /a service's worker never imports its api/,
  ],
  [
    'a route constructs chain queries',
    'services/account/src/api/x.ts',
    "import { ChainQueries, type ChainApi } from '@frequency-gateway/chain';\nexport const q = (api: ChainApi) => new ChainQueries(api);",
    /new ChainQueries: only a composition root/,
  ],
  [
    'a module below the root opens Redis',
    'services/content-watcher/src/registrations2.ts',
    "import { openRedis } from '@frequency-gateway/platform';\nexport const redis = openRedis('redis://127.0.0.1');",
    /openRedis: only a composition root/,
  ],
])('lint fails when %s', async (_what, path, code, expected) => {
  expect(await layerProblems(path, code)).toEqual([expect.stringMatching(expected)]);
});

test.each([
  [
    'a composition root opens the chain and Redis',
    'services/account/src/api/component.ts',
    "import { openChain } from '@frequency-gateway/chain';\nimport { openRedis } from '@frequency-gateway/platform';\nexport const parts = () => [openChain({ url: 'ws://127.0.0.1:9944' }), openRedis('redis://127.0.0.1')];",
  ],
  [
    'a test uses dev packages and the chain client',
    'services/account/test/x.test.ts',
    "export { startRedisServer } from '@frequency-gateway/devstack';\nexport { Keyring } from '@polkadot/keyring';",
  ],
  [
    "the devchain's tests wait with devstack",
    'dev/devchain/test/x.test.ts',
    "export { waitUntil } from '@frequency-gateway/devstack';",
  ],
  [
    'shared/chain uses the chain client and the platform logger',
    'shared/chain/src/x.ts',
    "export { ApiPromise } from '@polkadot/api';\nexport type { Logger } from '@frequency-gateway/platform';",
  ],
])('lint allows it when %s', async (_what, path, code) => {
  expect(await layerProblems(path, code)).toEqual([]);
});

test('the repository keeps its own layering', async () => {
  // Only the layer rules, on every TypeScript and JavaScript file that `npm run lint` reads.
  const layers = new ESLint({
    cwd: root,
    // The files' own eslint-disable comments are about the other rules.
    allowInlineConfig: false,
    overrideConfigFile: true,
    overrideConfig: [
      { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', '.dev/**'] },
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
      ...layerRules(),
    ],
  });
  const results = await layers.lintFiles(['.']);
  const problems = results.flatMap((result) =>
    result.messages.map((message) => `${result.filePath.slice(root.length)}:${message.line} ${message.message}`),
  );
  expect(problems).toEqual([]);
  expect(results.length).toBeGreaterThan(300);
}, 120_000);
