/**
 * Turns a Frequency workspace that takes the Polkadot SDK from git into one that takes the same crates from the
 * crate registry. Its Cargo.lock already names the version of every crate the git tag holds, and each release of
 * the SDK publishes exactly those versions, so the manifest pins them (`=version`) and the lock keeps every choice
 * it made, only with registry sources and their checksums.
 */

export const REGISTRY_SOURCE = 'registry+https://github.com/rust-lang/crates.io-index';

const PACKAGE_SEPARATOR = '\n[[package]]\n';

interface LockedPackage {
  name: string;
  version: string;
  source: string | undefined;
}

function lockedPackage(block: string): LockedPackage | undefined {
  const name = /^name = "([^"]+)"$/m.exec(block)?.[1];
  const version = /^version = "([^"]+)"$/m.exec(block)?.[1];
  if (name === undefined || version === undefined) return undefined;
  return { name, version, source: /^source = "([^"]+)"$/m.exec(block)?.[1] };
}

/** The crates the lock takes from git, with the version it recorded for each. */
export function gitLockedVersions(lock: string): Map<string, string> {
  const versions = new Map<string, string>();
  for (const block of lock.split(PACKAGE_SEPARATOR)) {
    const locked = lockedPackage(block);
    if (locked?.source?.startsWith('git+')) versions.set(locked.name, locked.version);
  }
  return versions;
}

export interface ManifestRewrite {
  text: string;
  /** Workspace dependencies from git that no member uses (the lock has no version for them): dropped. */
  dropped: string[];
}

/**
 * The workspace manifest with every git dependency pinned to its locked registry version, the `[patch]` tables
 * removed (they only pointed crates at git), and the members that `keepMember` refuses left out.
 */
export function rewriteManifest(
  manifest: string,
  locked: Map<string, string>,
  keepMember: (member: string) => boolean,
): ManifestRewrite {
  const dropped: string[] = [];
  const withoutPatches = manifest.replace(/^\[patch\.[^\]]+\]\n(?:(?!\[)[^\n]*\n)*/gm, '');
  const pinned = withoutPatches.replace(
    /^([A-Za-z0-9_-]+) = \{([^}\n]*\bgit = "[^"]+"[^}\n]*)\}$/gm,
    (_, key: string, body: string) => {
      const name = /\bpackage = "([^"]+)"/.exec(body)?.[1] ?? key;
      const version = locked.get(name);
      if (version === undefined) {
        dropped.push(name);
        return `# ${key}: from git, used by no member`;
      }
      const fields = body.replace(/\bgit = "[^"]+",\s*(tag|branch|rev) = "[^"]+"/, `version = "=${version}"`);
      return `${key} = {${fields}}`;
    },
  );
  const members = pinned.replace(/^members = \[([^\]]*)\]/m, (_, list: string) => {
    const kept = [...list.matchAll(/"([^"]+)"/g)].map((m) => m[1] as string).filter(keepMember);
    return `members = [\n${kept.map((member) => `  "${member}",\n`).join('')}]`;
  });
  return { text: members, dropped };
}

/**
 * The lock with each git package turned into the registry package of the same version (with `checksums`' entry),
 * a package already locked from the registry at that version kept once, and references to git sources in
 * dependency lists pointed at the registry.
 */
export function rewriteLock(lock: string, checksums: Map<string, string>): string {
  const seen = new Set<string>();
  const blocks: string[] = [];
  for (const block of lock.split(PACKAGE_SEPARATOR)) {
    const locked = lockedPackage(block);
    if (locked === undefined || locked.source === undefined) {
      blocks.push(block);
      continue;
    }
    let rewritten = block;
    if (locked.source.startsWith('git+')) {
      const checksum = checksums.get(`${locked.name}@${locked.version}`);
      if (checksum === undefined) throw new Error(`no registry checksum for ${locked.name} ${locked.version}`);
      rewritten = block.replace(
        `source = "${locked.source}"`,
        `source = "${REGISTRY_SOURCE}"\nchecksum = "${checksum}"`,
      );
    }
    const key = `${locked.name}@${locked.version}`;
    if (seen.has(key)) continue;
    seen.add(key);
    blocks.push(rewritten);
  }
  return blocks.join(PACKAGE_SEPARATOR).replace(/\(git\+[^)]*\)/g, `(${REGISTRY_SOURCE})`);
}
