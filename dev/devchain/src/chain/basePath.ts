import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import type { Hex } from './extrinsic.js';
import { ReplayError, type Chain, type ChainJournal, type SealedBlock } from './chain.js';

/** Why a base path cannot be used: the devchain refuses to start rather than serve another chain. */
export class BasePathError extends Error {
  constructor(
    readonly directory: string,
    problem: string,
  ) {
    super(`--base-path ${directory}: ${problem}`);
    this.name = 'BasePathError';
  }
}

/**
 * One line of the block log: a sealed block (with the finalized number when its seal moved it), finality alone,
 * or a reorganisation (the best chain back to block `retract`; the blocks of its new branch follow).
 */
type LogEntry = (SealedBlock & { finalized?: number }) | { finalized: number } | { retract: number };

const FORMAT = 1;
const CHAIN_FILE = 'chain.json';
const LOG_FILE = 'blocks.jsonl';
const LOCK_FILE = 'lock';

/** Directories this process holds, so that a second devchain in the same process is refused too. */
const held = new Set<string>();

const isHex = (value: unknown): value is Hex => typeof value === 'string' && /^0x[0-9a-f]*$/.test(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

function parseEntry(line: string): LogEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const entry = value as Record<string, unknown>;
  if (entry.retract !== undefined)
    return isCount(entry.retract) && Object.keys(entry).length === 1 ? (entry as LogEntry) : undefined;
  if (entry.finalized !== undefined && !isCount(entry.finalized)) return undefined;
  if (entry.number === undefined) return entry.finalized === undefined ? undefined : (entry as LogEntry);
  if (entry.upgradedTo !== undefined && !isCount(entry.upgradedTo)) return undefined;
  const sealed =
    isCount(entry.number) &&
    isHex(entry.hash) &&
    isCount(entry.timestamp) &&
    Array.isArray(entry.extrinsics) &&
    entry.extrinsics.every(isHex);
  return sealed ? (entry as LogEntry) : undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The devchain's `--base-path`: the chain on disk, as a node keeps its database there. `chain.json` holds the
 * genesis hash; `blocks.jsonl` one JSON line per sealed block (number, hash, timestamp, signed extrinsics, and
 * the finalized number when the seal moved it), per finality move or per reorganisation (`retract`: the best
 * chain back to that block, so a replay ends on the final chain, not the retracted blocks), each written
 * synchronously before the block is recorded or announced, so a killed process loses at most the line it was
 * writing. `lock` holds the process id of the devchain using it.
 */
export class BasePath implements ChainJournal {
  private closed = false;

  private constructor(
    readonly directory: string,
    private readonly fd: number,
  ) {}

  /**
   * Opens `directory` for `chain` (genesis built, nothing sealed yet): refuses another genesis, replays the
   * blocks it holds and their finality, and returns the journal for the blocks to come. A torn last line is
   * cut off with a warning; any other problem of its content is a BasePathError.
   */
  static open(directory: string, chain: Chain): BasePath {
    const refuse = (problem: string) => new BasePathError(directory, problem);
    mkdirSync(directory, { recursive: true });
    lock(directory, refuse);
    try {
      checkGenesis(directory, chain.genesisHash, refuse);
      const log = join(directory, LOG_FILE);
      replay(chain, readLog(log, directory, refuse), refuse);
      return new BasePath(directory, openSync(log, 'a'));
    } catch (error) {
      unlock(directory);
      throw error;
    }
  }

  sealed(block: SealedBlock, finalized: number | undefined): void {
    this.append(finalized === undefined ? block : { ...block, finalized });
  }

  finalized(number: number): void {
    this.append({ finalized: number });
  }

  retracted(number: number): void {
    this.append({ retract: number });
  }

  private append(entry: LogEntry): void {
    appendFileSync(this.fd, `${JSON.stringify(entry)}\n`);
  }

  /** Closes the log and releases the lock (once). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
    unlock(this.directory);
  }
}

/** Takes the directory's lock: refused while another live process (or this one) holds it; a dead one's is taken over. */
function lock(directory: string, refuse: (problem: string) => Error): void {
  if (held.has(resolve(directory))) throw refuse('already in use by a devchain in this process');
  const file = join(directory, LOCK_FILE);
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const pid = Number(readFileSync(file, 'utf8'));
    // A pid equal to ours is a previous incarnation's (a container restarted), not a live holder.
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && alive(pid))
      throw refuse(`in use by process ${pid} (${file})`);
    writeFileSync(file, String(process.pid));
  }
  held.add(resolve(directory));
}

function unlock(directory: string): void {
  held.delete(resolve(directory));
  rmSync(join(directory, LOCK_FILE), { force: true });
}

/** Records the genesis hash in a new directory; refuses a directory that holds another genesis. */
function checkGenesis(directory: string, genesisHash: Hex, refuse: (problem: string) => Error): void {
  const file = join(directory, CHAIN_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    if (readFileOrEmpty(join(directory, LOG_FILE)).length > 0) throw refuse(`${LOG_FILE} without ${CHAIN_FILE}`);
    // Written whole or not at all: a crash here leaves no half-written genesis hash.
    writeFileSync(`${file}.tmp`, `${JSON.stringify({ format: FORMAT, genesisHash })}\n`);
    renameSync(`${file}.tmp`, file);
    return;
  }
  let recorded: { format?: unknown; genesisHash?: unknown };
  try {
    recorded = JSON.parse(text) as typeof recorded;
  } catch {
    throw refuse(`${CHAIN_FILE} is not JSON`);
  }
  if (recorded.format !== FORMAT) throw refuse(`${CHAIN_FILE} has format ${String(recorded.format)}, not ${FORMAT}`);
  if (recorded.genesisHash !== genesisHash)
    throw refuse(
      `holds the chain of genesis ${String(recorded.genesisHash)}, but these options build genesis ${genesisHash} ` +
        '(another --genesis?); refusing to start',
    );
}

function readFileOrEmpty(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Buffer.alloc(0);
    throw error;
  }
}

/** The log's entries; a last line without its newline (a write cut short) is cut off the file with a warning. */
function readLog(file: string, directory: string, refuse: (problem: string) => Error): LogEntry[] {
  const bytes = readFileOrEmpty(file);
  const end = bytes.lastIndexOf(0x0a) + 1;
  if (end < bytes.length) {
    process.emitWarning(
      `--base-path ${directory}: ignored the torn last line of ${LOG_FILE} (${bytes.length - end} bytes of a write ` +
        'that did not finish)',
      'DevchainBasePathWarning',
    );
    truncateSync(file, end);
  }
  const lines = bytes.subarray(0, end).toString('utf8').split('\n').slice(0, -1);
  return lines.map((line, index) => {
    const entry = parseEntry(line);
    if (!entry)
      throw refuse(
        `line ${index + 1} of ${LOG_FILE} is neither a sealed block nor a finality or reorganisation record`,
      );
    return entry;
  });
}

/** Replays the log on `chain`; a block that does not come out as sealed stops the start. */
function replay(chain: Chain, entries: readonly LogEntry[], refuse: (problem: string) => Error): void {
  try {
    for (const entry of entries) {
      if ('retract' in entry) chain.restoreRetracted(entry.retract);
      else {
        if ('number' in entry) chain.importBlock(entry);
        if (entry.finalized !== undefined) chain.restoreFinalized(entry.finalized);
      }
    }
  } catch (error) {
    if (!(error instanceof ReplayError)) throw error;
    throw refuse(
      `${error.message} (another genesis or devchain version?); refusing to start rather than serve another chain`,
    );
  }
}

/**
 * The runtime upgrade a base path's chain enacted, if any: its block and spec version. Read before the base
 * path is opened, so that the upgraded runtime is built and scheduled for the replay to enact it again.
 */
export function journaledUpgrade(directory: string): { at: number; specVersion: number } | undefined {
  for (const line of readFileOrEmpty(join(directory, LOG_FILE)).toString('utf8').split('\n')) {
    const entry = parseEntry(line);
    if (entry && 'number' in entry && entry.upgradedTo !== undefined)
      return { at: entry.number, specVersion: entry.upgradedTo };
  }
  return undefined;
}
