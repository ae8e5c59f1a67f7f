/**
 * Spanner RPCs that read or run SQL: ExecuteSql, ExecuteStreamingSql, ExecuteBatchDml, Read,
 * StreamingRead, PartitionQuery and PartitionRead.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ActiveFault } from '../common/faults';
import type { EmulatedDatabase, Txn } from './database';
import { type DmlOutcome, isDml, runDml } from './dml';
import { streaming, unary } from './grpc-util';
import { Code, SpannerError, type SpannerTypeJson, type StreamingQuery, type WireValue } from './hooks';
import {
  collect,
  type Outcome,
  parseResumeToken,
  type ResumePoint,
  resultSet,
  writePartials,
} from './partials';
import { createPartitions, type PartitionHints, partitionSubject, partitionView } from './partition-tokens';
import { runQuery } from './query';
import { type ReadSpec, readRows } from './read';
import { type Resolved, resolve, type SelectorJson } from './selector';
import type { EmulatorState } from './state';
import { type ProtoValue, protoToWire, wireToProto } from './values';

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

function wireParams(req: SqlRequest): Record<string, WireValue> {
  return Object.fromEntries(Object.entries(req.params?.fields ?? {}).map(([k, v]) => [k, protoToWire(v)]));
}

/** Runs one DML statement of a request in its transaction (a partitioned one commits at once). */
function dml(db: EmulatedDatabase, txn: Txn, req: SqlRequest): DmlOutcome & { partitioned: boolean } {
  const partitioned = txn.partitioned === true;
  if (partitioned) txn.snapNs = db.clock.nowNs();
  const run = {
    ctx: db.ctx,
    txn,
    writer: db.writer(txn),
    params: wireParams(req),
    types: req.paramTypes ?? {},
    partitioned,
  };
  try {
    const out = runDml(run, req.sql);
    if (partitioned) db.commit(txn, []);
    return { ...out, partitioned };
  } catch (err) {
    if (partitioned) db.rollback(txn);
    throw err;
  }
}

/**
 * Resolves a read's selector; a resumed single-use read (the client re-sends it with the empty id it got
 * back, or with the same single-use options) reads the snapshot its resume token carries.
 */
async function resolveRead(db: EmulatedDatabase, sel: SelectorJson | undefined, resume: ResumePoint) {
  const emptyId = sel?.id !== undefined && Buffer.from(sel.id).length === 0;
  if (resume.snapNs !== undefined && (emptyId || sel?.singleUse)) {
    db.checkReadable(resume.snapNs);
    return { view: { snapNs: resume.snapNs } } satisfies Resolved;
  }
  return resolve(db, sel, false);
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
    const out = dml(db, r.txn as Txn, req);
    const count = String(out.count);
    return {
      metadata: { rowType: { fields: out.returned?.fields ?? [] }, transaction: r.metadata },
      rows: out.returned?.rows ?? [],
      stats: out.partitioned ? { rowCountLowerBound: count } : { rowCountExact: count },
    };
  }
  const r = await resolveRead(db, req.transaction, parseResumeToken(req.resumeToken));
  let view = r.view;
  if (req.partitionToken?.length)
    view = partitionView(state, db, req.partitionToken, req.sql, req.transaction);
  const ctx = db.ctxAt(view);
  const res = runQuery(ctx, req.sql, view, wireParams(req), req.paramTypes ?? {});
  return {
    metadata: { rowType: { fields: res.fields }, transaction: r.metadata },
    rows: res.rows,
    snapNs: view.snapNs,
  };
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
  const res = readRows(db.ctxAt(view), req, view);
  return {
    metadata: { rowType: { fields: res.fields }, transaction: r.metadata },
    rows: res.rows,
    snapNs: view.snapNs,
  };
}

/** Plain-object `google.spanner.v1.PartitionOptions` (int64 fields as strings). */
interface PartitionOptionsJson {
  maxPartitions?: string | number;
  partitionSizeBytes?: string | number;
}

function hintsOf(o: PartitionOptionsJson | undefined): PartitionHints {
  return {
    maxPartitions: Number(o?.maxPartitions ?? 0),
    partitionSizeBytes: Number(o?.partitionSizeBytes ?? 0),
  };
}

/** Streams an outcome from the row after those the request's resume token says were already sent. */
function streamFromResumePoint<Req>(
  call: grpc.ServerWritableStream<Req, unknown>,
  req: { resumeToken?: Buffer },
  out: Outcome,
  fault: ActiveFault | undefined,
): Promise<void> {
  return writePartials(
    call as grpc.ServerWritableStream<unknown, unknown>,
    out,
    parseResumeToken(req.resumeToken).rows,
    fault,
  );
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
      await streamFromResumePoint(call, req, await execute(state, req, true, signalOf(call)), fault);
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
            const out = dml(db, txn, { ...s, session: req.session });
            resultSets.push({
              metadata: {
                rowType: { fields: out.returned?.fields ?? [] },
                ...(i === 0 ? { transaction: r.metadata } : {}),
              },
              rows: (out.returned?.rows ?? []).map((row) => ({ values: row.map(wireToProto) })),
              stats: { rowCountExact: String(out.count) },
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
      const r = await resolveRead(db, req.transaction, parseResumeToken(req.resumeToken));
      await streamFromResumePoint(call, req, readOutcome(state, req, r, db), fault);
    }),
    PartitionQuery: unary(
      f,
      'PartitionQuery',
      async (req: SqlRequest & { partitionOptions?: PartitionOptionsJson }) => {
        const db = state.sessionDb(req.session);
        if (isDml(req.sql))
          throw new SpannerError(Code.INVALID_ARGUMENT, 'PartitionQuery does not accept DML');
        const table = partitionSubject(db, req.sql, wireParams(req), req.paramTypes ?? {});
        const r = await resolve(db, req.transaction, false);
        return createPartitions(state, db, r, table, req.sql, hintsOf(req.partitionOptions));
      },
    ),
    PartitionRead: unary(
      f,
      'PartitionRead',
      async (req: ReadRequest & { partitionOptions?: PartitionOptionsJson }) => {
        const db = state.sessionDb(req.session);
        const r = await resolve(db, req.transaction, false);
        return createPartitions(state, db, r, req.table, `table:${req.table}`, hintsOf(req.partitionOptions));
      },
    ),
  };
}
