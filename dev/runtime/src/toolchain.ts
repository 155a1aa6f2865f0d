import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { findExecutable } from '@frequency-gateway/devstack';

/** The Wasm target the runtime is built for (only the WebAssembly MVP and mutable globals, as the executors need). */
export const WASM_TARGET = 'wasm32v1-none';

export interface RustToolchain {
  rustc: string;
  cargo: string;
  /** `rustc --version`. */
  version: string;
  /** The WebAssembly linker (rust-lld, or LLVM's wasm-ld). */
  linker: string;
}

export class ToolchainMissing extends Error {}

const run = (program: string, args: string[]) => execFileSync(program, args, { encoding: 'utf8' }).trim();

/**
 * A Rust toolchain that can build the runtime here: it knows the Wasm target and ships the standard library's
 * source (no precompiled Wasm `core` is needed: the build compiles it, `-Zbuild-std`). rustup's toolchains on our
 * machines have neither, and rustup cannot download them; Debian's rustc-web does (dev/runtime/install-toolchain).
 * `RUNTIME_RUSTC` names one explicitly.
 */
export function findRustToolchain(): RustToolchain {
  const candidates = [process.env.RUNTIME_RUSTC, '/usr/bin/rustc', findExecutable('rustc')].filter(
    (candidate): candidate is string => candidate !== undefined && existsSync(candidate),
  );
  const refusals: string[] = [];
  for (const rustc of new Set(candidates)) {
    const version = run(rustc, ['--version']);
    const sysroot = run(rustc, ['--print', 'sysroot']);
    if (!run(rustc, ['--print', 'target-list']).split('\n').includes(WASM_TARGET)) {
      refusals.push(`${rustc} (${version}) does not know the target ${WASM_TARGET}`);
      continue;
    }
    if (!existsSync(join(sysroot, 'lib/rustlib/src/rust/library/core'))) {
      refusals.push(`${rustc} (${version}) has no standard library source under ${sysroot}/lib/rustlib/src`);
      continue;
    }
    const cargo = join(dirname(rustc), 'cargo');
    if (!existsSync(cargo)) {
      refusals.push(`${rustc} has no cargo beside it`);
      continue;
    }
    const linker = findWasmLinker(sysroot);
    if (linker === undefined) {
      refusals.push(`${rustc} has no rust-lld, and no wasm-ld is on PATH`);
      continue;
    }
    return { rustc, cargo, version, linker };
  }
  throw new ToolchainMissing(
    `no Rust toolchain here can build the runtime: ${refusals.join('; ') || 'no rustc found'}. ` +
      'dev/runtime/install-toolchain installs one (Debian rustc-web, rust-web-src and lld; root).',
  );
}

function findWasmLinker(sysroot: string): string | undefined {
  const bundled = join(sysroot, 'lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld');
  if (existsSync(bundled)) return bundled;
  const named = findExecutable('wasm-ld');
  if (named !== undefined) return named;
  // LLVM's versioned names (wasm-ld-22): the newest.
  const versioned = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((folder) => folder !== '' && existsSync(folder))
    .flatMap((folder) =>
      readdirSync(folder)
        .filter((name) => /^wasm-ld-\d+$/.test(name))
        .map((name) => ({ path: join(folder, name), major: Number(name.slice('wasm-ld-'.length)) })),
    )
    .sort((a, b) => b.major - a.major);
  return versioned[0]?.path;
}
