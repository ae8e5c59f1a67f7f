/**
 * Results as PartialResultSets: resume tokens that let a broken stream continue exactly once, and the
 * non-streaming ResultSet form.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ActiveFault } from '../common/faults';
import { Code, SpannerError, type WireValue } from './hooks';
import { STREAMING_CHUNK_BYTES } from './limits';
import type { QueryResult } from './query';
import type { Resolved } from './selector';
import { wireToProto } from './values';

/** What a query or read produced, before it is put on the wire. */
export interface Outcome {
  metadata: { rowType: { fields: QueryResult['fields'] }; transaction?: Resolved['metadata'] };
  rows: AsyncIterable<WireValue[]> | WireValue[][];
  stats?: { rowCountExact?: string; rowCountLowerBound?: string };
  /** The snapshot the rows were read at, carried in resume tokens (absent for change-stream queries). */
  snapNs?: bigint;
}

/** A decoded resume token: rows already delivered, and the snapshot they were read at. */
export interface ResumePoint {
  rows: number;
  snapNs?: bigint;
}

/**
 * Resume tokens are `<rows delivered>` or `<rows delivered>@<snapshot ns>`: the snapshot lets a resumed
 * single-use read (which the client re-sends with an empty transaction id) see the same data again.
 */
export function parseResumeToken(token: Buffer | undefined): ResumePoint {
  const m = /^(\d+)(?:@(\d+))?$/.exec(token?.toString() ?? '');
  if (!m) return { rows: 0 };
  return { rows: Number(m[1]), ...(m[2] ? { snapNs: BigInt(m[2]) } : {}) };
}

function resumeToken(rows: number, snapNs?: bigint): Buffer {
  return Buffer.from(snapNs === undefined ? String(rows) : `${rows}@${snapNs}`);
}

async function* asAsync(rows: Outcome['rows']): AsyncIterable<WireValue[]> {
  yield* rows;
}

/** Rough wire size of a value, to cut PartialResultSets at about {@link STREAMING_CHUNK_BYTES}. */
function wireSize(v: WireValue): number {
  if (typeof v === 'string') return v.length + 2;
  if (Array.isArray(v)) {
    let n = 2;
    for (const e of v) n += wireSize(e);
    return n;
  }
  return 8;
}

/**
 * Puts rows on the wire as PartialResultSets of about 1 MiB (or 50 rows), as the service does. A string value
 * larger than what is left of a chunk is split across PartialResultSets (`chunkedValue`, no resume token:
 * the client concatenates the pieces); every set that ends at a row boundary carries a resume token.
 */
class PartialWriter {
  private values: WireValue[] = [];
  private bytes = 0;
  private rows = 0;
  private first = true;

  constructor(
    private readonly call: grpc.ServerWritableStream<unknown, unknown>,
    private readonly out: Outcome,
    private readonly tokenAt: () => number,
  ) {}

  get pendingRows(): number {
    return this.rows;
  }

  async add(row: WireValue[], rowsPerSet: number): Promise<void> {
    for (const value of row) {
      let v = value;
      while (typeof v === 'string' && this.bytes + v.length > STREAMING_CHUNK_BYTES && v.length > 1) {
        let room = Math.max(2, STREAMING_CHUNK_BYTES - this.bytes);
        // Never between the two halves of a surrogate pair: each piece travels as UTF-8 on its own.
        const c = v.charCodeAt(room - 1);
        if (c >= 0xd800 && c <= 0xdbff) room--;
        this.values.push(v.slice(0, room));
        v = v.slice(room);
        await this.send(false, true);
      }
      this.values.push(v);
      this.bytes += wireSize(v);
    }
    this.rows++;
    if (this.rows >= rowsPerSet || this.bytes >= STREAMING_CHUNK_BYTES) await this.flush(false);
  }

  /** Sends the complete rows held (and the end of the stream when `last`). */
  async flush(last: boolean): Promise<void> {
    if (!this.first && this.values.length === 0 && !last) return;
    await this.send(last, false);
  }

  private async send(last: boolean, chunked: boolean): Promise<void> {
    const prs = {
      values: this.values.map(wireToProto),
      ...(chunked ? { chunkedValue: true } : { resumeToken: resumeToken(this.tokenAt(), this.out.snapNs) }),
      ...(this.first ? { metadata: this.out.metadata } : {}),
      ...(last && this.out.stats ? { stats: this.out.stats } : {}),
      ...(last ? { last: true } : {}),
    };
    this.first = false;
    this.values = [];
    this.bytes = 0;
    if (!chunked) this.rows = 0;
    if (!this.call.write(prs)) await new Promise((resolve) => this.call.once('drain', resolve));
  }
}

/** Streams an outcome as PartialResultSets, each ending at a row with a resume token; honours a row-limiting fault. */
export async function writePartials(
  call: grpc.ServerWritableStream<unknown, unknown>,
  out: Outcome,
  resume: number,
  fault?: ActiveFault,
): Promise<void> {
  let sent = 0;
  const writer = new PartialWriter(call, out, () => resume + sent);
  let index = 0;
  const rows = asAsync(out.rows)[Symbol.asyncIterator]();
  for (;;) {
    let next = rows.next();
    // A streaming source (a long-polling change-stream query) may wait before its next row: send what is
    // buffered first, or the client sees nothing until 50 rows or the end of the query.
    if (writer.pendingRows > 0) {
      const idle = await Promise.race([next, new Promise<'idle'>((r) => setImmediate(() => r('idle')))]);
      if (idle === 'idle') await writer.flush(false);
      else next = Promise.resolve(idle);
    }
    const step = await next;
    if (step.done) break;
    const row = step.value;
    if (call.cancelled) return;
    if (index++ < resume) continue;
    if (fault?.afterItems !== undefined && sent >= fault.afterItems)
      throw new SpannerError(fault.code ?? Code.UNAVAILABLE, fault.message ?? 'Injected stream fault');
    sent++;
    // One row per PartialResultSet while a fault is armed, so every row before the fault is a checkpoint.
    await writer.add(row, fault ? 1 : 50);
  }
  await writer.flush(true);
}

/** The ResultSet of a non-streaming call. */
export function resultSet(out: Outcome & { rows: WireValue[][] }) {
  return {
    metadata: out.metadata,
    rows: out.rows.map((r) => ({ values: r.map(wireToProto) })),
    stats: out.stats,
  };
}

/** Every row of an outcome. */
export async function collect(rows: Outcome['rows']): Promise<WireValue[][]> {
  const all: WireValue[][] = [];
  for await (const r of asAsync(rows)) all.push(r);
  return all;
}
