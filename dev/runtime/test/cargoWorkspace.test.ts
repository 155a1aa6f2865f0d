import { gitLockedVersions, REGISTRY_SOURCE, rewriteLock, rewriteManifest } from '../src/cargoWorkspace.js';
import { indexPath } from '../src/crateIndex.js';

const SDK = 'git+https://github.com/paritytech/polkadot-sdk?tag=polkadot-stable2506-2#abc';

const manifest = `[workspace]
members = [
  "node",
  "node/cli",
  "pallets/*",
  "runtime/*",
]

[workspace.dependencies]
log = { version = "0.4.27", default-features = false }
frame-support = { git = "https://github.com/paritytech/polkadot-sdk", tag = "polkadot-stable2506-2", default-features = false }
codec = { package = "parity-scale-codec", version = "3.7.5" }
sp-io-renamed = { package = "sp-io", git = "https://github.com/paritytech/polkadot-sdk", tag = "polkadot-stable2506-2" }
unused-sdk-crate = { git = "https://github.com/paritytech/polkadot-sdk", tag = "polkadot-stable2506-2" }

[patch.crates-io]
base64ct = { git = "https://github.com/RustCrypto/formats.git", tag = "base64ct/v1.7.2", package = "base64ct" }

[profile.release]
panic = "unwind"
`;

const lock = `version = 4

[[package]]
name = "frame-support"
version = "41.0.0"
source = "${SDK}"
dependencies = [
 "sp-io 41.0.1 (${SDK})",
]

[[package]]
name = "sp-io"
version = "41.0.1"
source = "${SDK}"

[[package]]
name = "sp-io"
version = "41.0.1"
source = "${REGISTRY_SOURCE}"
checksum = "1111"

[[package]]
name = "log"
version = "0.4.27"
source = "${REGISTRY_SOURCE}"
checksum = "2222"

[[package]]
name = "pallet-msa"
version = "0.0.0"
`;

describe('turning the SDK git dependencies into registry ones', () => {
  const locked = gitLockedVersions(lock);

  it('reads the version the lock recorded for each crate taken from git', () => {
    expect([...locked]).toEqual([
      ['frame-support', '41.0.0'],
      ['sp-io', '41.0.1'],
    ]);
  });

  it('pins each git dependency to its locked version, drops the unused ones, the patches and the node members', () => {
    const { text, dropped } = rewriteManifest(manifest, locked, (member) => !member.startsWith('node'));
    expect(text).toContain('frame-support = { version = "=41.0.0", default-features = false }');
    expect(text).toContain('sp-io-renamed = { package = "sp-io", version = "=41.0.1" }');
    expect(text).toContain('log = { version = "0.4.27", default-features = false }');
    expect(text).not.toContain('git =');
    expect(text).not.toContain('[patch.crates-io]');
    expect(text).toContain('[profile.release]\npanic = "unwind"');
    expect(text).toContain('members = [\n  "pallets/*",\n  "runtime/*",\n]');
    expect(dropped).toEqual(['unused-sdk-crate']);
  });

  it('locks the same versions from the registry, once each, with their checksums', () => {
    const checksums = new Map([
      ['frame-support@41.0.0', 'aaaa'],
      ['sp-io@41.0.1', 'bbbb'],
    ]);
    const rewritten = rewriteLock(lock, checksums);
    expect(rewritten).not.toContain('git+');
    expect(rewritten).toContain(
      `name = "frame-support"\nversion = "41.0.0"\nsource = "${REGISTRY_SOURCE}"\nchecksum = "aaaa"`,
    );
    expect(rewritten.match(/name = "sp-io"/g)).toHaveLength(1);
    expect(rewritten).toContain(`"sp-io 41.0.1 (${REGISTRY_SOURCE})"`);
    expect(rewritten).toContain('name = "pallet-msa"\nversion = "0.0.0"\n');
  });

  it('refuses a git crate the registry has no checksum for', () => {
    expect(() => rewriteLock(lock, new Map([['sp-io@41.0.1', 'bbbb']]))).toThrow(
      'no registry checksum for frame-support 41.0.0',
    );
  });
});

describe("the crate index's layout", () => {
  it.each([
    ['a', '1/a'],
    ['cc', '2/cc'],
    ['syn', '3/s/syn'],
    ['Frame-Support', 'fr/am/frame-support'],
  ])('%s lives at %s', (name, path) => expect(indexPath(name)).toBe(path));
});
