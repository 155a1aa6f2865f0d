/**
 * Regenerates runtime/handle-confusables.json from the confusable-character table of Frequency's
 * handles-utils (`src/data/confusable_characters.txt`): each line's first character is the canonical one and
 * the rest are its look-alikes. Like the runtime's build step, pairs outside the allowed ranges are dropped.
 *
 *   node --import tsx --conditions=source scripts/confusables.ts path/to/confusable_characters.txt
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { isAllowedCodePoint } from '../src/pallets/handles/characters.js';

const [source] = process.argv.slice(2);
if (!source) {
  process.stderr.write('usage: confusables.ts <confusable_characters.txt>' + '\n');
  process.exit(2);
}
const map: Record<string, string> = {};
for (const line of readFileSync(source, 'utf8').split('\n')) {
  const [canonical, ...lookAlikes] = [...line];
  if (canonical === undefined || !isAllowedCodePoint(canonical.codePointAt(0) as number)) continue;
  for (const lookAlike of lookAlikes) {
    if (!isAllowedCodePoint(lookAlike.codePointAt(0) as number)) continue;
    if (map[lookAlike] !== undefined && map[lookAlike] !== canonical) throw new Error(`${lookAlike} maps twice`);
    map[lookAlike] = canonical;
  }
}
const sorted = Object.fromEntries(
  Object.entries(map).sort(([a], [b]) => (a.codePointAt(0) as number) - (b.codePointAt(0) as number)),
);
const target = new URL('../runtime/handle-confusables.json', import.meta.url);
writeFileSync(
  target,
  JSON.stringify({ about: 'look-alike → canonical character, from Frequency v2.0.1 handles-utils', map: sorted }) +
    '\n',
);
process.stdout.write(`${Object.keys(sorted).length} look-alikes written to ${target.pathname}` + '\n');
