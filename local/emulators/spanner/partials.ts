/**
 * Results as PartialResultSets: resume tokens that let a broken stream continue exactly once, and the
 * non-streaming ResultSet form.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ActiveFault } from '../common/faults';
import { Code, SpannerError, type WireValue } from './hooks';
import type { QueryResult } from './query';
import type { Resolved } from './selector';
import { wireToProto } from './values';

/** What a query or read produced, before it is put on the wire. */
export interface Outcome {
  metadata: { rowType: { fields: QueryResult['fields'] }; transaction?: Resolved['metadata'] };
  rows: AsyncIterable<WireValue[]> | WireValue[][];
  stats?: { rowCountExact: string };
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

/** Streams an outcome as PartialResultSets, each with a resume token; honours a row-limiting fault. */
export async function writePartials(
  call: grpc.ServerWritableStream<unknown, unknown>,
  out: Outcome,
  resume: number,
  fault?: ActiveFault,
): Promise<void> {
  let sent = 0;
  let first = true;
  const chunk: WireValue[][] = [];
  const flush = async (last: boolean) => {
    if (!first && chunk.length === 0 && !last) return;
    const prs = {
      values: chunk.flat().map(wireToProto),
      resumeToken: resumeToken(resume + sent, out.snapNs),
      ...(first ? { metadata: out.metadata } : {}),
      ...(last && out.stats ? { stats: out.stats } : {}),
      ...(last ? { last: true } : {}),
    };
    first = false;
    chunk.length = 0;
    if (!call.write(prs)) await new Promise((resolve) => call.once('drain', resolve));
  };
  let index = 0;
  const rows = asAsync(out.rows)[Symbol.asyncIterator]();
  for (;;) {
    let next = rows.next();
    // A streaming source (a long-polling change-stream query) may wait before its next row: send what is
    // buffered first, or the client sees nothing until 50 rows or the end of the query.
    if (chunk.length > 0) {
      const idle = await Promise.race([next, new Promise<'idle'>((r) => setImmediate(() => r('idle')))]);
      if (idle === 'idle') await flush(false);
      else next = Promise.resolve(idle);
    }
    const step = await next;
    if (step.done) break;
    const row = step.value;
    if (call.cancelled) return;
    if (index++ < resume) continue;
    if (fault?.afterItems !== undefined && sent >= fault.afterItems)
      throw new SpannerError(fault.code ?? Code.UNAVAILABLE, fault.message ?? 'Injected stream fault');
    chunk.push(row);
    sent++;
    // One row per PartialResultSet while a fault is armed, so every row before the fault is a checkpoint.
    if (chunk.length >= (fault ? 1 : 50)) await flush(false);
  }
  await flush(true);
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
