// `npm run build`, after tsc: copies what the compiled modules read from beside themselves and tsc does not
// emit — the Redis scripts (`*.lua`) — from each package's src/ into its dist/, at the same relative path.
// The Dockerfile and tools/image-smoke take every package's dist/ whole, so the image gets them too.
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ASSET = /\.lua$/;
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Every asset file under `directory`, recursively. */
function assetsUnder(directory) {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return assetsUnder(path);
    return ASSET.test(entry.name) ? [path] : [];
  });
}

let copied = 0;
for (const group of ['shared', 'services']) {
  for (const name of readdirSync(join(root, group))) {
    const src = join(root, group, name, 'src');
    if (!existsSync(src)) continue;
    for (const file of assetsUnder(src)) {
      const target = join(root, group, name, 'dist', relative(src, file));
      mkdirSync(dirname(target), { recursive: true });
      copyFileSync(file, target);
      copied += 1;
    }
  }
}
process.stdout.write(`copied ${copied} build assets (*.lua) into dist/\n`);
