import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { blake2AsHex } from '@polkadot/util-crypto';
import { findRustToolchain, ToolchainMissing, WASM_TARGET, type RustToolchain } from './toolchain.js';
import { prepareWorkTree, SourceTreeMissing } from './workTree.js';
import { runtimeCacheDir } from './cache.js';

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** The Frequency source the devchain models, beside the project (see docs/real-runtime.md). */
export const DEFAULT_SOURCE = resolve(PROJECT_ROOT, '../shared/reference/frequency-v2.0.1');
/**
 * The standalone development chain's runtime, the one the devchain imitates: `frequency-no-relay`, plus the
 * optional dependencies the runtime's `std` feature turns on (`pallet-assets/std`, `serde_json/std`), which
 * substrate-wasm-builder carries over to the Wasm build as features of their own.
 */
export const DEFAULT_FEATURES = ['frequency-no-relay', 'pallet-assets', 'serde_json'];

export interface RuntimeBuild {
  wasm: string;
  /** blake2-256 of the code, as the chain's `:code` hash and a runtime upgrade's authorization name it. */
  codeHash: string;
  sha256: string;
  bytes: number;
  source: string;
  features: string[];
  toolchain: string;
  /** SHA-256 of the build's inputs: the rewritten tree, the toolchain, the features and the flags. */
  inputHash: string;
  /** Seconds the compilation took when it ran (a cached build reports the one that made it). */
  seconds: number;
  builtAt: string;
}

/**
 * What substrate-wasm-builder gives the compiler for a runtime (with its release profile: thin LTO, abort on
 * panic), and `--allow-undefined`: the host functions a runtime calls are undefined symbols that become the Wasm
 * module's imports, which rustc stopped asking the linker for in 1.96 (the toolchain Frequency names is 1.90).
 */
const RUSTFLAGS = [
  '-C link-arg=--export-table',
  '-C link-arg=--export=__heap_base',
  '-C link-arg=--import-memory',
  '-C link-arg=--allow-undefined',
  '--cfg substrate_runtime',
].join(' ');
const PROFILE = { PANIC: 'abort', LTO: 'thin', CODEGEN_UNITS: '16', STRIP: 'false' };

function cargoBuild(tree: string, toolchain: RustToolchain, features: string[], targetDir: string): Promise<void> {
  const args = [
    'rustc',
    '-p',
    'frequency-runtime',
    '--lib',
    '--crate-type',
    'cdylib',
    `--target=${WASM_TARGET}`,
    '-Z',
    'build-std=core,alloc',
    '--release',
    '--no-default-features',
    `--features=${features.join(',')}`,
    `--target-dir=${targetDir}`,
  ];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    RUSTC: toolchain.rustc,
    CARGO_HOME: join(runtimeCacheDir(), 'cargo'),
    // -Zbuild-std on a stable compiler, as substrate-wasm-builder does for a target without a precompiled core.
    RUSTC_BOOTSTRAP: '1',
    SKIP_WASM_BUILD: '1',
    RUSTFLAGS,
    CARGO_TARGET_WASM32V1_NONE_LINKER: toolchain.linker,
    ...Object.fromEntries(Object.entries(PROFILE).map(([key, value]) => [`CARGO_PROFILE_RELEASE_${key}`, value])),
  };
  delete env.CARGO_ENCODED_RUSTFLAGS;
  return new Promise((done, fail) => {
    const cargo = spawn(toolchain.cargo, args, { cwd: tree, env, stdio: 'inherit' });
    cargo.once('error', fail);
    cargo.once('exit', (code, signal) =>
      code === 0 ? done() : fail(new Error(`cargo ${args.join(' ')} ended with ${signal ?? `exit code ${code}`}`)),
    );
  });
}

/**
 * Builds the runtime Wasm of a Frequency source tree once per input: a second call with the same tree, toolchain
 * and features answers from the cache in seconds.
 */
export async function buildRuntime(source = DEFAULT_SOURCE, features = DEFAULT_FEATURES): Promise<RuntimeBuild> {
  const cache = runtimeCacheDir();
  const toolchain = findRustToolchain();
  const tree = await prepareWorkTree(resolve(source), join(cache, 'tree'), join(cache, 'registry-checksums.json'));
  const inputHash = createHash('sha256')
    .update([tree.hash, toolchain.version, features.join(','), RUSTFLAGS, JSON.stringify(PROFILE)].join('\n'))
    .digest('hex');
  const record = join(cache, 'builds', `${inputHash.slice(0, 16)}.json`);
  if (existsSync(record)) {
    const built = JSON.parse(readFileSync(record, 'utf8')) as RuntimeBuild;
    if (existsSync(built.wasm)) {
      writeFileSync(join(cache, 'builds', LATEST), `${JSON.stringify(built, null, 2)}\n`);
      return built;
    }
  }
  const started = process.hrtime.bigint();
  const targetDir = join(cache, 'target');
  await cargoBuild(tree.path, toolchain, features, targetDir);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const code = readFileSync(join(targetDir, WASM_TARGET, 'release', 'frequency_runtime.wasm'));
  const wasm = join(cache, 'builds', `frequency-runtime-${inputHash.slice(0, 16)}.wasm`);
  mkdirSync(dirname(wasm), { recursive: true });
  copyFileSync(join(targetDir, WASM_TARGET, 'release', 'frequency_runtime.wasm'), wasm);
  const built: RuntimeBuild = {
    wasm,
    codeHash: blake2AsHex(code, 256),
    sha256: createHash('sha256').update(code).digest('hex'),
    bytes: code.length,
    source: resolve(source),
    features,
    toolchain: toolchain.version,
    inputHash,
    seconds: Math.round(seconds),
    builtAt: new Date().toISOString(),
  };
  writeFileSync(record, `${JSON.stringify(built, null, 2)}\n`);
  writeFileSync(join(cache, 'builds', LATEST), `${JSON.stringify(built, null, 2)}\n`);
  return built;
}

const LATEST = 'latest.json';

export class RuntimeNotBuilt extends Error {}

/**
 * The runtime `make runtime` built last, for tests: read from the cache only, so that a test run neither compiles
 * nor reaches the crate registry.
 */
export function builtRuntime(): RuntimeBuild {
  const latest = join(runtimeCacheDir(), 'builds', LATEST);
  if (!existsSync(latest)) throw new RuntimeNotBuilt(`no runtime is built (${latest}): run make runtime first`);
  const built = JSON.parse(readFileSync(latest, 'utf8')) as RuntimeBuild;
  if (!existsSync(built.wasm)) throw new RuntimeNotBuilt(`${built.wasm} is gone: run make runtime again`);
  return built;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { source: { type: 'string' }, features: { type: 'string' } },
  });
  const started = Date.now();
  try {
    const built = await buildRuntime(values.source ?? DEFAULT_SOURCE, values.features?.split(',') ?? DEFAULT_FEATURES);
    process.stdout.write(
      `${JSON.stringify({ ...built, answeredInSeconds: (Date.now() - started) / 1000 }, null, 2)}\n`,
    );
  } catch (error) {
    if (error instanceof SourceTreeMissing || error instanceof ToolchainMissing) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
