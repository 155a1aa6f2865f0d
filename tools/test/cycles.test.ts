// The import-cycle check of `npm run lint` (tools/lint/cycles.js): a loop between files, even through a type-only
// import, and a loop between two folders of a package's src/ fail, each printed as the chain that closes it; a
// tree without loops, and the repository as it is, pass.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importCycles } from '../lint/cycles.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

const TSCONFIG = {
  compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true },
  include: ['.'],
};

let fixture: string;

beforeEach(() => {
  fixture = mkdtempSync(join(tmpdir(), 'cycles-'));
});

afterEach(() => rmSync(fixture, { recursive: true, force: true }));

/** A package `pipeline` with these files under its src/, checked as the lint checks the repository. */
function cyclesOf(files: Record<string, string>): string[] {
  const written: Record<string, string> = {
    'tsconfig.json': JSON.stringify(TSCONFIG),
    'pipeline/package.json': JSON.stringify({ name: 'pipeline', type: 'module' }),
    ...Object.fromEntries(Object.entries(files).map(([path, text]) => [`pipeline/src/${path}`, text])),
  };
  for (const [path, text] of Object.entries(written)) {
    mkdirSync(dirname(join(fixture, path)), { recursive: true });
    writeFileSync(join(fixture, path), text);
  }
  return importCycles(join(fixture, 'tsconfig.json'));
}

/**
 * Stages that depend on each other one way: a later one (batch) on an earlier one (document), each on the
 * package's shared records in src/ itself, and src/index.ts on them all.
 */
const ONE_WAY = {
  'index.ts': "export { relay } from './intake/relay.js';\nexport { write } from './batch/writer.js';\n",
  'records.ts': 'export interface RequestRecord { id: string }\n',
  'intake/relay.ts':
    "import { build } from '../document/builder.js';\nimport type { RequestRecord } from '../records.js';\nexport const relay = (record: RequestRecord) => build(record.id);\n",
  'document/builder.ts':
    "import type { Announcement } from './announcement.js';\nexport const build = (id: string): Announcement => ({ row: id });\n",
  'document/announcement.ts': 'export interface Announcement { row: string }\n',
  'batch/book.ts':
    "import type { Announcement } from '../document/announcement.js';\nexport const join = (announcement: Announcement) => announcement.row;\n",
  'batch/writer.ts':
    "import { build } from '../document/builder.js';\nimport { join } from './book.js';\nexport const write = (ids: string[]) => ids.map((id) => join(build(id)));\n",
};

test('a tree whose files and folders depend on each other one way passes', () => {
  expect(cyclesOf(ONE_WAY)).toEqual([]);
});

test.each([
  [
    'a loop between files, one of its imports type-only',
    {
      'batch/book.ts':
        "import type { Announcement } from '../document/announcement.js';\nimport { tally } from './tally.js';\nexport const join = (announcement: Announcement) => tally(announcement.row);\n",
      'batch/tally.ts':
        "import type { join } from './book.js';\nexport const tally = (row: string): ReturnType<typeof join> => row;\n",
    },
    'file loop: pipeline/src/batch/book.ts → pipeline/src/batch/tally.ts → pipeline/src/batch/book.ts',
  ],
  [
    'a loop between files through a dynamic import',
    {
      'records.ts':
        "export interface RequestRecord { id: string }\nexport const replay = async () => (await import('./intake/relay.js')).relay;\n",
    },
    'file loop: pipeline/src/intake/relay.ts → pipeline/src/records.ts → pipeline/src/intake/relay.ts',
  ],
  [
    // The earlier stage reaches into the later one, which needs another file of the earlier one.
    'a loop between two folders, though no file imports itself back',
    {
      'document/builder.ts':
        "import { join } from '../batch/book.js';\nimport type { Announcement } from './announcement.js';\nexport const build = (id: string): Announcement => ({ row: join({ row: id }) });\n",
    },
    'folder loop: pipeline/src/batch → pipeline/src/document → pipeline/src/batch' +
      ' (pipeline/src/batch/book.ts → pipeline/src/document/announcement.ts;' +
      ' pipeline/src/document/builder.ts → pipeline/src/batch/book.ts)',
  ],
  [
    'a loop between two folders through a nested one (an edge at the level where the paths part)',
    {
      'document/parse/fields.ts':
        "import { write } from '../../batch/writer.js';\nexport const fields = (ids: string[]) => write(ids).length;\n",
    },
    'folder loop: pipeline/src/batch → pipeline/src/document → pipeline/src/batch' +
      ' (pipeline/src/batch/book.ts → pipeline/src/document/announcement.ts;' +
      ' pipeline/src/document/parse/fields.ts → pipeline/src/batch/writer.ts)',
  ],
])('the check fails on %s, printing the chain that closes it', (_what, files, loop) => {
  expect(cyclesOf({ ...ONE_WAY, ...files })).toEqual([loop]);
});

test('the repository has no import loop', () => {
  expect(importCycles(join(root, 'tsconfig.json'), root)).toEqual([]);
}, 60_000);
