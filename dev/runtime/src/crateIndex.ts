/** Checksums of published crate versions, read from the crate registry's sparse index (what cargo itself reads). */

const INDEX = 'https://index.crates.io';

/** The index path of a crate, by the registry's layout rule (by name length, then its first letters). */
export function indexPath(name: string): string {
  const lower = name.toLowerCase();
  if (lower.length <= 2) return `${lower.length}/${lower}`;
  if (lower.length === 3) return `3/${lower[0]}/${lower}`;
  return `${lower.slice(0, 2)}/${lower.slice(2, 4)}/${lower}`;
}

interface IndexEntry {
  vers: string;
  cksum: string;
}

async function checksumOf(name: string, version: string): Promise<string> {
  const answer = await fetch(`${INDEX}/${indexPath(name)}`);
  if (!answer.ok) throw new Error(`the crate index answered ${answer.status} for ${name}`);
  const entries = (await answer.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as IndexEntry);
  const entry = entries.find((candidate) => candidate.vers === version);
  if (entry === undefined) throw new Error(`${name} ${version} is not published in the crate registry`);
  return entry.cksum;
}

/** `name@version` → checksum for each crate, eight requests at a time. */
export async function registryChecksums(versions: Map<string, string>): Promise<Map<string, string>> {
  const pending = [...versions];
  const checksums = new Map<string, string>();
  const worker = async () => {
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const [name, version] = next;
      checksums.set(`${name}@${version}`, await checksumOf(name, version));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return checksums;
}
