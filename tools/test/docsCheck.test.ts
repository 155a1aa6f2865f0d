import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkDocs, formatProblems } from '../src/docsCheck.js';
import { declaredTests, GUARANTEES_PAGE, guaranteesOf } from '../src/docsCheck/guaranteeCitations.js';
import { readMarkdown } from '../src/docsCheck/markdownText.js';
import { repositoryPathIn } from '../src/docsCheck/pathReferences.js';

const folders: string[] = [];
afterAll(() => folders.forEach((folder) => rmSync(folder, { recursive: true, force: true })));

const MAKEFILE = ['.PHONY: dev test', 'dev: node_modules ## run it', '\tnpm run dev', 'cluster images:', '\ttrue', ''];
const PACKAGES = {
  'package.json': JSON.stringify({ scripts: { dev: 'tsx dev.ts', test: 'jest' }, workspaces: ['services/*'] }),
  'services/alpha/package.json': JSON.stringify({ name: '@fixture/alpha', scripts: { bench: 'tsx bench.ts' } }),
  'services/beta/package.json': JSON.stringify({ name: '@fixture/beta', scripts: {} }),
};

/** A git repository in a temporary folder with a Makefile, two workspaces and the given files; its problems. */
function problemsOf(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'docs-check-'));
  folders.push(root);
  const all = { Makefile: MAKEFILE.join('\n'), ...PACKAGES, 'services/alpha/src/main.ts': '', ...files };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: root });
  return formatProblems(checkDocs(root));
}

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index}`).join(' ');

describe('docs check: README budgets', () => {
  it('allows the root README 120 lines and reports the 121st', () => {
    const lines = (count: number) => `${Array.from({ length: count }, (_, index) => `line ${index}`).join('\n')}\n`;
    expect(problemsOf({ 'README.md': lines(120) })).toBe('');
    expect(problemsOf({ 'README.md': lines(121) })).toBe('README.md:121: 121 lines; the root README has at most 120');
  });

  it('allows any other README 400 words, fenced code counted, and names the line of the 401st', () => {
    expect(problemsOf({ 'docs/README.md': `# Title\n\n${words(397)}\n` })).toBe('');
    expect(problemsOf({ 'docs/README.md': `# Title\n\n${words(390)}\n\n\`\`\`sh\n${words(20)}\n\`\`\`\n` })).toBe(
      'docs/README.md:6: 412 words; a README has at most 400 (generated tables aside)',
    );
  });

  it('does not count what lies between generated markers, nor table rules', () => {
    const table = [
      '| key | default |',
      '|---|---|',
      ...Array.from({ length: 300 }, (_, n) => `| \`k${n}\` | \`${n}\` |`),
    ];
    const readme = [`# Chart`, '', words(300), '', '<!-- values:start -->', ...table, '<!-- values:end -->', ''];
    expect(problemsOf({ 'charts/x/README.md': readme.join('\n') })).toBe('');
    expect(problemsOf({ 'charts/x/README.md': readme.join('\n').replaceAll('values:', 'table-') })).toMatch(
      /^charts\/x\/README.md:\d+: \d+ words/,
    );
  });
});

describe('docs check: links', () => {
  const guide = '# Guide\n\n## Setting up `make dev`\n\n## Setting up `make dev`\n';

  it('reports a relative link to nothing, and an anchor no heading makes', () => {
    const readme = [
      '# Project',
      'See [the guide](docs/guide.md), [its setup](docs/guide.md#setting-up-make-dev) and the [folder](docs/).',
      'The [second setup](docs/guide.md#setting-up-make-dev-1), [the top](#project), [the web](https://example.com/x).',
      '![logo](docs/logo.png) and [the old guide](docs/old.md).',
      '[broken anchor](docs/guide.md#installing) and [gone](#nowhere).',
      '`[not a link](nowhere.md)`',
      '[reference]: ../outside.md',
    ];
    expect(problemsOf({ 'README.md': readme.join('\n'), 'docs/guide.md': guide })).toBe(
      [
        'README.md:4: link docs/logo.png: no file or folder docs/logo.png',
        'README.md:4: link docs/old.md: no file or folder docs/old.md',
        'README.md:5: link docs/guide.md#installing: no heading #installing in docs/guide.md',
        'README.md:5: link #nowhere: no heading #nowhere in README.md',
        'README.md:7: link ../outside.md leaves the repository',
      ].join('\n'),
    );
  });

  it('resolves a link from the Markdown file’s folder, or from the root when it starts with a slash', () => {
    const page = '[back](../README.md), [root](/Makefile), [sibling](guide.md#guide), [wrong](Makefile)\n';
    expect(problemsOf({ 'README.md': '# x\n', 'docs/guide.md': guide, 'docs/page.md': page })).toBe(
      'docs/page.md:1: link Makefile: no file or folder docs/Makefile',
    );
  });
});

describe('docs check: paths in code spans', () => {
  it.each([
    ['services/alpha/src/main.ts', 'services/alpha/src/main.ts'],
    ['dev/cluster/up', 'dev/cluster/up'],
    ['services/*/src', 'services/*/src'],
    ['docs/runbooks.md#an-alert', 'docs/runbooks.md'],
    ['values.yaml', 'values.yaml'],
    ['../README.md', '../README.md'],
  ])('takes `%s` for a path', (span, path) => expect(repositoryPathIn(span)).toBe(path));

  it.each([
    '/v1/accounts/{msaId}',
    '/v1/accounts/account/5Grw',
    '~/.cache/frequency-gateway/bin',
    '/var/lib/frequency-gateway-cluster/kubeconfig',
    'services/<service>/src/main.ts',
    'services/…/main.ts',
    'https://example.com/docs/x.md',
    'ipfs/kubo:v0.43.0',
    'frequency:e2e/capacity/staking.test.ts',
    'node services/alpha/src/main.ts api',
    '@polkadot/api',
    'dist/main.js',
    'services/alpha/dist/main.js',
    'node_modules/.bin/jest',
    'tsconfig.tsbuildinfo',
    'application/json',
    'nginx.ingress.kubernetes.io/proxy-body-size',
    'coordination.k8s.io/v1',
    'SIWF_V2_URL/api/payload',
    '10.0.0.0/8',
    'REDIS_URL',
    'make dev',
    'api|worker',
  ])('does not take `%s` for a path', (span) => expect(repositoryPathIn(span)).toBeUndefined());

  it('reports a path that resolves to nothing, from the root, the file’s folder, or as a path’s end', () => {
    const readme = [
      '# Alpha',
      '`services/alpha/src/main.ts`, `src/main.ts`, `main.ts`, `services/*/src`, `package.json`, `../../Makefile`.',
      'Stale: `services/alpha/src/old.ts`, `services/*/lib`, `old.ts`, `../Makefile`, `services/gamma/`.',
      'Not paths: `/v1/accounts/{msaId}`, `~/.cache/x/bin`, `dist/main.js`, `frequency:e2e/x.test.ts`.',
      '```sh',
      'cat services/nowhere/file.ts `services/nowhere/in-fence.ts`',
      '```',
    ];
    expect(problemsOf({ 'services/alpha/README.md': readme.join('\n') })).toBe(
      [
        'services/alpha/README.md:3: `services/alpha/src/old.ts`: no such file or folder',
        'services/alpha/README.md:3: `services/*/lib`: no such file or folder',
        'services/alpha/README.md:3: `old.ts`: no such file or folder',
        'services/alpha/README.md:3: `../Makefile`: no such file or folder',
        'services/alpha/README.md:3: `services/gamma/`: no such file or folder',
      ].join('\n'),
    );
  });
});

describe('docs check: make targets and npm scripts', () => {
  it('reports a make target the Makefile lacks, in code spans and fenced blocks only', () => {
    const readme = [
      '# x',
      '`make dev`, `make cluster images`, `sudo make test`, `make TEST_WORKERS=1 dev`, `make cluster && make images`.',
      'In prose we make sure and make bogus claims; `make nope` is one.',
      'A span split by a line break: `make',
      'bogus`.',
      '```sh',
      'make dev            # then make anything',
      '$ make cluster deploy',
      'echo make nothing',
      '```',
    ];
    expect(problemsOf({ 'README.md': readme.join('\n') })).toBe(
      [
        'README.md:2: make test: no such target in the Makefile',
        'README.md:3: make nope: no such target in the Makefile',
        'README.md:4: make bogus: no such target in the Makefile',
        'README.md:8: make deploy: no such target in the Makefile',
      ].join('\n'),
    );
  });

  it('reports an npm script that package.json lacks, or the workspace’s named by -w', () => {
    const readme = [
      '# x',
      '`npm run dev -- --port-offset 100`, `npm test`, `npm run bench -w services/alpha`, `npm run bench -w @fixture/alpha`.',
      '`npm run bench --workspaces --if-present`, `npm run bench --workspaces`, `npm ci`, `npm install`.',
      '`npm run bench`, `npm run lint`, `npm run bench -w services/beta`, `npm -w services/gamma run bench`.',
    ];
    expect(problemsOf({ 'README.md': readme.join('\n') })).toBe(
      [
        'README.md:4: npm run bench: no npm script "bench" in package.json',
        'README.md:4: npm run lint: no npm script "lint" in package.json',
        'README.md:4: npm run bench -w services/beta: no npm script "bench" in workspace services/beta',
        "README.md:4: npm -w services/gamma run bench: no workspace services/gamma (npm -w takes a workspace's folder or package name)",
      ].join('\n'),
    );
  });
});

describe('docs check: the tests the guarantees page cites', () => {
  const TESTS = [
    "describe('settling', () => {",
    "  it('settles once', async () => {});",
    '  test.each([[1], [2]])(`retries %s times, then fails`, async () => {});',
    "  it.each`kind\n${'broadcast'}`('$kind fails alone', async () => {});",
    '  test(`answers ${LIMIT} requests`, async () => {});',
    // A skipped test, spelled in two pieces so that no search for skipped tests in this repository finds a real one.
    ['  it', "skip('is skipped', async () => {});"].join('.'),
    "  it.todo('is still to write');",
    '});',
  ].join('\n');
  const cite = (file: string, name: string) => `- \`${file}\` › ${name}`;
  const page = (...sections: string[][]) =>
    ['# Guarantees', '', 'Cited as `` - `file` › name ``.', ...sections.flatMap((lines) => ['', ...lines])].join('\n');
  const guarantees = (sections: string[][]) =>
    problemsOf({ 'services/alpha/test/settle.test.ts': TESTS, [GUARANTEES_PAGE]: page(...sections) });

  it('finds every test a file declares, with what names an .each or template name stands for', () => {
    const tests = declaredTests(TESTS);
    expect(tests.map((test) => test.name)).toEqual([
      'settles once',
      'retries %s times, then fails',
      '$kind fails alone',
      'answers ${LIMIT} requests',
    ]);
    const named = (name: string) => tests.filter((test) => test.name === name || test.pattern.test(name)).length;
    expect(named('retries 2 times, then fails')).toBe(1);
    expect(named('broadcast fails alone')).toBe(1);
    expect(named('answers 100 requests')).toBe(1);
    expect(named('settles once more')).toBe(0);
    expect(named('retries  times, then fails')).toBe(0);
    expect(named('is skipped')).toBe(0);
  });

  it('passes a page whose every guarantee cites tests that exist, by name as written or as jest makes it', () => {
    const file = 'services/alpha/test/settle.test.ts';
    expect(
      guarantees([
        [
          '## (a) Settled once',
          '',
          'Prose, and a list that cites nothing:',
          '- `settle.test.ts` is a file',
          cite(file, 'settles once'),
        ],
        ['## (b) Retried', cite(file, 'retries %s times, then fails'), cite(file, 'retries 3 times, then fails')],
        ['## (c) Alone', cite(file, 'broadcast fails alone'), cite(file, 'answers 10 requests')],
        // Outside a guarantee's section, a citation is not checked (its path still is, as every path in code).
        ['## Known limits', cite(file, 'no test has this name')],
      ]),
    ).toBe('');
  });

  it('names a guarantee without a test, a cited file that does not exist and a test name no test has', () => {
    const file = 'services/alpha/test/settle.test.ts';
    expect(
      guarantees([
        ['## (a) Settled once', cite(file, 'settles once'), cite('services/alpha/test/gone.test.ts', 'settles once')],
        ['## (b) Retried', 'Proven some day.', '', '### Tests', '', 'None yet.'],
        ['## (c) Skipped', cite(file, 'is skipped'), cite(file, 'settles twice')],
      ]),
    ).toBe(
      [
        'docs/guarantees.md:7: guarantee (a) cites `services/alpha/test/gone.test.ts`: no such file',
        // The path check of every code span finds it too.
        'docs/guarantees.md:7: `services/alpha/test/gone.test.ts`: no such file or folder',
        'docs/guarantees.md:9: guarantee (b) cites no test',
        'docs/guarantees.md:17: guarantee (c) cites `services/alpha/test/settle.test.ts` › is skipped: no test of that name in it',
        'docs/guarantees.md:18: guarantee (c) cites `services/alpha/test/settle.test.ts` › settles twice: no test of that name in it',
      ].join('\n'),
    );
  });

  it('reads the real page: every guarantee, (a) to (j), cites at least one test', () => {
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const real = guaranteesOf(readMarkdown(GUARANTEES_PAGE, readFileSync(join(root, GUARANTEES_PAGE), 'utf8')));
    expect(real.map(({ label }) => label)).toEqual([
      '(a)',
      '(b)',
      '(c)',
      '(d)',
      '(e)',
      '(f)',
      '(g)',
      '(h)',
      '(i)',
      '(j)',
    ]);
    expect(real.filter(({ citations }) => citations.length === 0)).toEqual([]);
    // That each cited file and test exists is checked with every other problem of the real docs, below.
  });
});

describe('docs check: the repository', () => {
  it('finds no problem in any Markdown file (each one it finds is listed as file:line below)', () => {
    expect(formatProblems(checkDocs())).toBe('');
  });
});
