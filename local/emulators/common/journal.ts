/**
 * Persistence for the emulators (`--data-dir`): a snapshot plus an append-only journal of JSON lines in one
 * directory. Every change is appended (synchronously, one line) before the request that made it is
 * answered, so a killed emulator loses nothing it acknowledged; a torn last line is ignored on load. At
 * start the emulator replays snapshot and journal, then writes a fresh snapshot and an empty journal.
 * Values keep their types across the round trip: bigint as `{"$n": "…"}`, Buffer as `{"$b": "<base64>"}`,
 * NaN and infinities as `{"$f": "Infinity"}`.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

/** JSON text with bigints and Buffers tagged. */
export function encode(value: unknown): string {
  return JSON.stringify(value, function replacer(this: unknown, key: string, v: unknown) {
    const raw = (this as Record<string, unknown>)[key];
    if (typeof raw === 'bigint') return { $n: raw.toString() };
    if (Buffer.isBuffer(raw)) return { $b: raw.toString('base64') };
    if (typeof raw === 'number' && !Number.isFinite(raw)) return { $f: String(raw) };
    if (raw instanceof Uint8Array) return { $b: Buffer.from(raw).toString('base64') };
    return v;
  });
}

/** Parses text written by {@link encode}. */
export function decode<T = unknown>(text: string): T {
  return JSON.parse(text, (_k, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o);
      if (keys.length === 1 && typeof o.$n === 'string') return BigInt(o.$n);
      if (keys.length === 1 && typeof o.$b === 'string') return Buffer.from(o.$b, 'base64');
      if (keys.length === 1 && typeof o.$f === 'string') return Number(o.$f);
    }
    return v;
  }) as T;
}

/** What a journal directory held at start. */
export interface Loaded<S, E> {
  snapshot?: S;
  events: E[];
}

/** One emulator's snapshot and journal in `dir`. */
export class Journal<S, E> {
  private fd: number | undefined;
  private readonly snapshotPath: string;
  private readonly journalPath: string;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.snapshotPath = join(dir, 'snapshot.json');
    this.journalPath = join(dir, 'journal.jsonl');
  }

  /** Reads the snapshot and the complete journal lines (a torn last line, from a kill mid-write, is dropped). */
  load(): Loaded<S, E> {
    const snapshot = existsSync(this.snapshotPath)
      ? decode<S>(readFileSync(this.snapshotPath, 'utf8'))
      : undefined;
    const events: E[] = [];
    if (existsSync(this.journalPath)) {
      const lines = readFileSync(this.journalPath, 'utf8').split('\n');
      for (const [i, line] of lines.entries()) {
        if (!line) continue;
        try {
          events.push(decode<E>(line));
        } catch (err) {
          if (i === lines.length - 1) break;
          throw new Error(`${this.journalPath}:${i + 1} is not a journal entry: ${(err as Error).message}`);
        }
      }
    }
    return { snapshot, events };
  }

  /** Writes `snapshot` atomically (temp file, fsync, rename) and starts an empty journal. */
  compact(snapshot: S): void {
    const tmp = `${this.snapshotPath}.tmp`;
    const fd = openSync(tmp, 'w');
    writeSync(fd, encode(snapshot));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.snapshotPath);
    this.close();
    this.fd = openSync(this.journalPath, 'w');
  }

  /** Appends one event. */
  append(event: E): void {
    this.fd ??= openSync(this.journalPath, 'a');
    writeSync(this.fd, `${encode(event)}\n`);
  }

  /** Flushes to disk and closes the journal. */
  close(): void {
    if (this.fd === undefined) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }
}
