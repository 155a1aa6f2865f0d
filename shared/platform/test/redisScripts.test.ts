import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { RedisScript, ScriptHeaderError } from '../src/index.js';

// Every Redis script of the gateway is a .lua file that says what its KEYS and ARGV are and names them in
// locals: a fixed position (KEYS[2], ARGV[3]) is read once, into a local, before the script does anything else.
const root = fileURLToPath(new URL('../../../', import.meta.url));

const luaFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? entry.name === 'node_modules' || entry.name === 'dist'
        ? []
        : luaFiles(join(dir, entry.name))
      : entry.name.endsWith('.lua')
        ? [join(dir, entry.name)]
        : [],
  );

const scripts = ['shared', 'services'].flatMap((group) => luaFiles(join(root, group)));

test('the scripts are found', () => {
  expect(scripts.map((file) => file.slice(root.length)).sort()).toEqual(
    expect.arrayContaining([
      'shared/chain/src/reserveNonce.lua',
      'shared/platform/src/requests/createRequests.lua',
      'shared/platform/src/requests/updateRequest.lua',
    ]),
  );
});

test.each(scripts.map((file) => [file.slice(root.length), file]))(
  '%s has its KEYS/ARGV header and reads fixed positions only into named locals at its start',
  (_name, file) => {
    expect(() => RedisScript.fromFile(pathToFileURL(file))).not.toThrow();
    const lines = readFileSync(file, 'utf8').split('\n');
    const body = lines.filter((line) => line.trim() !== '' && !line.trim().startsWith('--'));
    const firstStatement = body.findIndex((line) => !line.startsWith('local '));
    const positional = body
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => /\b(KEYS|ARGV)\[\d+\]/.test(line));
    for (const { line, index } of positional) {
      expect(`${index < firstStatement ? 'opening local' : 'later statement'}: ${line}`).toMatch(
        /^opening local: local /,
      );
    }
  },
);

test('a script file without its KEYS/ARGV header is refused when loaded', () => {
  const folder = mkdtempSync(join(tmpdir(), 'script-'));
  try {
    const file = join(folder, 'bare.lua');
    writeFileSync(file, "return redis.call('GET', KEYS[1])\n");
    expect(() => RedisScript.fromFile(pathToFileURL(file))).toThrow(ScriptHeaderError);
    writeFileSync(
      file,
      "-- Reads a key.\n-- KEYS: [1] the key.\n-- ARGV: none.\nlocal key = KEYS[1]\nreturn redis.call('GET', key)\n",
    );
    expect(() => RedisScript.fromFile(pathToFileURL(file), 1)).not.toThrow();
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
