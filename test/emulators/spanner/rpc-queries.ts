/**
 * Spanner RPCs that read or run SQL: ExecuteSql, ExecuteStreamingSql, ExecuteBatchDml, Read,
 * StreamingRead, PartitionQuery and PartitionRead.
 */
import { randomBytes } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { ActiveFault } from '../common/faults';
import type { EmulatedDatabase } from './database';
import { isDml, runDml } from './dml';
import { streaming, unary } from './grpc-util';
import { Code, SpannerError, type SpannerTypeJson, type StreamingQuery, type WireValue } from './hooks';
import { type QueryResult, runTranslated } from './query';
import { type ReadSpec, readRows } from './read';
import { type Resolved, resolve, type SelectorJson } from './selector';
import type { EmulatorState } from './state';
import { isWord, tokenize } from './tokenizer';
import { translate } from './translate';
import { type ProtoValue, paramToStored, protoToWire, type StoredValue, wireToProto } from './values';

/** Plain-object ExecuteSqlRequest (the fields used). */
interface SqlRequest {
  session: string;
  transaction?: SelectorJson;
  sql: string;
  params?: { fields?: Record<string, ProtoValue> };
  paramTypes?: Record<string, SpannerTypeJson>;
  resumeToken?: Buffer;
  partitionToken?: Buffer;
  seqno?: string;
  requestOptions?: { transactionTag?: string };
}

type ReadRequest = ReadSpec & {
  session: string;
  transaction?: SelectorJson;
  resumeToken?: Buffer;
  partitionToken?: Buffer;
};

interface Outcome {
  metadata: { rowType: { fields: QueryResult['fields'] }; transaction?: Resolved['metadata'] };
  rows: AsyncIterable<WireValue[]> | WireValue[][];
  stats?: { rowCountExact: string };
}

function wireParams(req: SqlRequest): Record<string, WireValue> {
  return Object.fromEntries(Object.entries(req.params?.fields ?? {}).map(([k, v]) => [k, protoToWire(v)]));
}

function storedParams(req: SqlRequest): Record<string, StoredValue> {
  const types = req.paramTypes ?? {};
  return Object.fromEntries(Object.entries(wireParams(req)).map(([k, v]) => [k, paramToStored(v, types[k])]));
}

const NOT_ROOT = [
  'ORDER',
  'GROUP',
  'LIMIT',
  'DISTINCT',
  'JOIN',
  'UNION',
  'HAVING',
  'INTERSECT',
  'EXCEPT',
  'COUNT',
  'SUM',
  'MIN',
  'MAX',
  'AVG',
];

function partitionSubject(db: EmulatedDatabase, sql: string): string {
  const t = translate(sql, db.dialect, db.schema);
  const words = tokenize(sql, db.dialect);
  if (
    t.tables.size !== 1 ||
    words.some((w) => NOT_ROOT.some((k) => isWord(w, k)) || isWord(w, 'INFORMATION_SCHEMA'))
  )
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Query is not root partitionable since it does not have a DistributedUnion at the root. Please check the conditions for a query to be root-partitionable.',
    );
  return [...t.tables][0] as string;
}

function partitionView(
  state: EmulatorState,
  db: EmulatedDatabase,
  token: Buffer,
  subject: string,
  sel?: SelectorJson,
) {
  const p = state.partitions.get(token.toString('hex'));
  if (!p || p.database !== db.name || p.subject !== subject)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Partition token does not match the request (SQL, table or database differ)',
    );
  if (sel?.id && Buffer.from(sel.id).toString('base64') !== p.txnId)
    throw new SpannerError(Code.INVALID_ARGUMENT, 'Partition token belongs to another transaction');
  return p.view;
}

async function execute(
  state: EmulatorState,
  req: SqlRequest,
  isStreaming: boolean,
  signal: AbortSignal,
): Promise<Outcome> {
  const db = state.sessionDb(req.session);
  const routed: StreamingQuery | undefined = db.hooks?.routeQuery({
    sql: req.sql,
    params: wireParams(req),
    paramTypes: req.paramTypes ?? {},
    transaction: req.transaction,
    streaming: isStreaming,
    schema: db.schema,
    signal,
  });
  if (routed) return { metadata: routed.metadata, rows: routed.rows };
  if (isDml(req.sql)) {
    const r = await resolve(db, req.transaction, true, req.requestOptions?.transactionTag);
    const txn = r.txn as NonNullable<typeof r.txn>;
    const n = runDml({ ctx: db.ctx, txn, writer: db.writer(txn), params: storedParams(req) }, req.sql);
    return {
      metadata: { rowType: { fields: [] }, transaction: r.metadata },
      rows: [],
      stats: { rowCountExact: String(n) },
    };
  }
  const r = await resolve(db, req.transaction, false);
  let view = r.view;
  if (req.partitionToken?.length)
    view = partitionView(state, db, req.partitionToken, req.sql, req.transaction);
  const res = runTranslated(db.ctx, translate(req.sql, db.dialect, db.schema), view, storedParams(req));
  return { metadata: { rowType: { fields: res.fields }, transaction: r.metadata }, rows: res.rows };
}

async function* asAsync(rows: AsyncIterable<WireValue[]> | WireValue[][]): AsyncIterable<WireValue[]> {
  yield* rows;
}

/** Streams an outcome as PartialResultSets, each with a resume token; honours a row-limiting fault. */
async function writePartials(
  call: grpc.ServerWritableStream<unknown, unknown>,
  out: Outcome,
  resume: number,
  fault?: ActiveFault,
) {
  let sent = 0;
  let first = true;
  const chunk: WireValue[][] = [];
  const flush = async (last: boolean) => {
    if (!first && chunk.length === 0 && !last) return;
    const values = chunk.flat().map(wireToProto);
    // The token is the absolute number of rows delivered so far, so a resumed call can resume again.
    const prs = {
      values,
      resumeToken: Buffer.from(String(resume + sent)),
      ...(first ? { metadata: out.metadata } : {}),
      ...(last && out.stats ? { stats: out.stats } : {}),
      ...(last ? { last: true } : {}),
    };
    first = false;
    chunk.length = 0;
    if (!call.write(prs)) await new Promise((resolve) => call.once('drain', resolve));
  };
  let index = 0;
  for await (const row of asAsync(out.rows)) {
    if (call.cancelled) return;
    if (index++ < resume) continue;
    if (fault?.afterItems !== undefined && sent >= fault.afterItems)
      throw new SpannerError(fault.code ?? Code.UNAVAILABLE, fault.message ?? 'Injected stream fault');
    chunk.push(row);
    sent++;
    if (chunk.length >= (fault ? 1 : 50)) await flush(false);
  }
  await flush(true);
}

function resultSet(out: Outcome & { rows: WireValue[][] }) {
  return {
    metadata: out.metadata,
    rows: out.rows.map((r) => ({ values: r.map(wireToProto) })),
    stats: out.stats,
  };
}

async function collect(rows: Outcome['rows']): Promise<WireValue[][]> {
  const all: WireValue[][] = [];
  for await (const r of asAsync(rows)) all.push(r);
  return all;
}

function signalOf(call: { on(event: 'cancelled', fn: () => void): unknown }): AbortSignal {
  const ac = new AbortController();
  call.on('cancelled', () => ac.abort());
  return ac.signal;
}

function readOutcome(state: EmulatorState, req: ReadRequest, r: Resolved, db: EmulatedDatabase): Outcome {
  let view = r.view;
  if (req.partitionToken?.length)
    view = partitionView(state, db, req.partitionToken, `table:${req.table}`, req.transaction);
  const res = readRows(db.ctx, req, view);
  return { metadata: { rowType: { fields: res.fields }, transaction: r.metadata }, rows: res.rows };
}

function createPartitions(
  state: EmulatorState,
  db: EmulatedDatabase,
  r: Resolved,
  table: string,
  subject: string,
  max: number,
) {
  if (!r.txn?.readOnly)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      'Partitioned reads and queries require a read-only transaction started with begin or id',
    );
  const t = db.schema.get(table);
  const keys = db.storage.keys(t, r.view);
  const n = Math.max(1, Math.min(state.options.partitions ?? 3, max > 0 ? max : Number.MAX_SAFE_INTEGER));
  const bounds = Array.from({ length: n + 1 }, (_, i) =>
    i === 0 || i === n ? undefined : keys[Math.floor((i * keys.length) / n)],
  );
  const partitions = [];
  for (let i = 0; i < n; i++) {
    const token = randomBytes(16);
    const view = { snapNs: r.txn.snapNs, range: { table: t.name, lo: bounds[i], hi: bounds[i + 1] } };
    state.partitions.set(token.toString('hex'), { database: db.name, txnId: r.txn.id, subject, view });
    partitions.push({ partitionToken: token });
  }
  return { partitions, transaction: r.metadata };
}

/** Handlers of the query and read RPCs. */
export function queryHandlers(state: EmulatorState): grpc.UntypedServiceImplementation {
  const f = state.faults;
  return {
    ExecuteSql: unary(f, 'ExecuteSql', async (req: SqlRequest, call) => {
      const out = await execute(state, req, false, signalOf(call));
      return resultSet({ ...out, rows: await collect(out.rows) });
    }),
    ExecuteStreamingSql: streaming(f, 'ExecuteStreamingSql', async (req: SqlRequest, call, fault) => {
      const out = await execute(state, req, true, signalOf(call));
      await writePartials(
        call as grpc.ServerWritableStream<unknown, unknown>,
        out,
        Number(req.resumeToken?.toString() || 0),
        fault,
      );
    }),
    ExecuteBatchDml: unary(
      f,
      'ExecuteBatchDml',
      async (req: { session: string; transaction?: SelectorJson; statements?: SqlRequest[] }) => {
        const db = state.sessionDb(req.session);
        const r = await resolve(db, req.transaction, true);
        const txn = r.txn as NonNullable<typeof r.txn>;
        const resultSets = [];
        for (const [i, s] of (req.statements ?? []).entries()) {
          try {
            const n = runDml(
              {
                ctx: db.ctx,
                txn,
                writer: db.writer(txn),
                params: storedParams({ ...s, session: req.session }),
              },
              s.sql,
            );
            resultSets.push({
              metadata: { rowType: { fields: [] }, ...(i === 0 ? { transaction: r.metadata } : {}) },
              stats: { rowCountExact: String(n) },
            });
          } catch (err) {
            const e = err instanceof SpannerError ? err : new SpannerError(Code.INTERNAL, String(err));
            if (i === 0) throw e;
            return { resultSets, status: { code: e.code, message: e.message } };
          }
        }
        return { resultSets, status: { code: 0 } };
      },
    ),
    Read: unary(f, 'Read', async (req: ReadRequest) => {
      const db = state.sessionDb(req.session);
      return resultSet(
        readOutcome(state, req, await resolve(db, req.transaction, false), db) as Outcome & {
          rows: WireValue[][];
        },
      );
    }),
    StreamingRead: streaming(f, 'StreamingRead', async (req: ReadRequest, call, fault) => {
      const db = state.sessionDb(req.session);
      const out = readOutcome(state, req, await resolve(db, req.transaction, false), db);
      await writePartials(
        call as grpc.ServerWritableStream<unknown, unknown>,
        out,
        Number(req.resumeToken?.toString() || 0),
        fault,
      );
    }),
    PartitionQuery: unary(
      f,
      'PartitionQuery',
      async (req: SqlRequest & { partitionOptions?: { maxPartitions?: string } }) => {
        const db = state.sessionDb(req.session);
        if (isDml(req.sql))
          throw new SpannerError(Code.INVALID_ARGUMENT, 'PartitionQuery does not accept DML');
        const table = partitionSubject(db, req.sql);
        const r = await resolve(db, req.transaction, false);
        return createPartitions(
          state,
          db,
          r,
          table,
          req.sql,
          Number(req.partitionOptions?.maxPartitions ?? 0),
        );
      },
    ),
    PartitionRead: unary(
      f,
      'PartitionRead',
      async (req: ReadRequest & { partitionOptions?: { maxPartitions?: string } }) => {
        const db = state.sessionDb(req.session);
        const r = await resolve(db, req.transaction, false);
        return createPartitions(
          state,
          db,
          r,
          req.table,
          `table:${req.table}`,
          Number(req.partitionOptions?.maxPartitions ?? 0),
        );
      },
    ),
  };
}
