import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { gitLockedVersions, rewriteLock, rewriteManifest } from './cargoWorkspace.js';
import { registryChecksums } from './crateIndex.js';
import { GENESIS_SCHEMAS_FILE, genesisSchemasJson } from './genesisSchemas.js';

/** What of a Frequency tree the runtime's build reads: the workspace files and the crates the runtime depends on. */
const TAKEN = ['Cargo.toml', 'Cargo.lock', 'common', 'pallets', 'runtime', 'resources'];

export class SourceTreeMissing extends Error {}

function filesUnder(root: string, path = root): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [relative(root, path)];
  return readdirSync(path)
    .sort()
    .flatMap((name) => filesUnder(root, join(path, name)));
}

/** Writes a file only when its content changes, so that cargo's fingerprints (modification times) stay valid. */
function writeIfChanged(path: string, content: Buffer | string): void {
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  if (existsSync(path) && readFileSync(path).equals(bytes)) return;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, bytes);
}

async function checksumsFor(versions: Map<string, string>, cacheFile: string): Promise<Map<string, string>> {
  const cached = existsSync(cacheFile)
    ? new Map(Object.entries(JSON.parse(readFileSync(cacheFile, 'utf8')) as Record<string, string>))
    : new Map<string, string>();
  const needed = new Map([...versions].filter(([name, version]) => !cached.has(`${name}@${version}`)));
  if (needed.size > 0) {
    for (const [key, checksum] of await registryChecksums(needed)) cached.set(key, checksum);
    writeIfChanged(cacheFile, `${JSON.stringify(Object.fromEntries([...cached].sort()), null, 1)}\n`);
  }
  return cached;
}

export interface WorkTree {
  path: string;
  /** SHA-256 over every file of the tree (paths and contents): the build's input, with the toolchain and flags. */
  hash: string;
  /** Git dependencies dropped because no member of the runtime's workspace uses them. */
  dropped: string[];
  /** Whether `resources/genesis-schemas.json` came from the devchain's facts (the source tree has none). */
  generatedGenesisSchemas: boolean;
}

/**
 * A copy of the source tree's runtime part in `path`, its git dependencies rewritten to registry ones (see
 * cargoWorkspace.ts), without the node's crates (the runtime does not need them) and without the toolchain file.
 * The source tree is only read.
 */
export async function prepareWorkTree(source: string, path: string, checksumCache: string): Promise<WorkTree> {
  for (const needed of ['Cargo.toml', 'Cargo.lock', 'runtime/frequency/Cargo.toml'])
    if (!existsSync(join(source, needed)))
      throw new SourceTreeMissing(`${source} is not a Frequency source tree: it has no ${needed}`);
  const wanted = new Map<string, Buffer | string>();
  for (const top of TAKEN)
    for (const file of filesUnder(source, join(source, top))) wanted.set(file, readFileSync(join(source, file)));

  const lock = String(wanted.get('Cargo.lock'));
  const locked = gitLockedVersions(lock);
  const manifest = rewriteManifest(String(wanted.get('Cargo.toml')), locked, (member) => !member.startsWith('node'));
  wanted.set('Cargo.toml', manifest.text);
  wanted.set('Cargo.lock', rewriteLock(lock, await checksumsFor(locked, checksumCache)));
  const generatedGenesisSchemas = !wanted.has(GENESIS_SCHEMAS_FILE);
  if (generatedGenesisSchemas) wanted.set(GENESIS_SCHEMAS_FILE, await genesisSchemasJson());

  for (const stale of filesUnder(path).filter((file) => !wanted.has(file) && !file.startsWith('target/')))
    rmSync(join(path, stale));
  const hash = createHash('sha256');
  for (const [file, content] of [...wanted].sort(([a], [b]) => (a < b ? -1 : 1))) {
    writeIfChanged(join(path, file), content);
    hash.update(`${file}\0`).update(content).update('\0');
  }
  return { path, hash: hash.digest('hex'), dropped: manifest.dropped, generatedGenesisSchemas };
}
