#!/usr/bin/env node
// Part of `npm run build`: tsc compiles src/ into dist/ but copies nothing else, and Redis scripts (src/**/*.lua)
// are read at run time from beside the module that runs them. Each package's scripts go to the same place under
// its dist/, which the image copies.
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

const luaFiles = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? luaFiles(join(dir, entry.name)) : entry.name.endsWith('.lua') ? [join(dir, entry.name)] : [],
  );

let copied = 0;
for (const group of ['shared', 'services']) {
  for (const name of readdirSync(join(root, group))) {
    const src = join(root, group, name, 'src');
    if (!existsSync(src)) continue;
    for (const file of luaFiles(src)) {
      const target = join(root, group, name, 'dist', relative(src, file));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(file, target);
      copied++;
    }
  }
}
process.stdout.write(`copied ${copied} Redis scripts into dist/\n`);
