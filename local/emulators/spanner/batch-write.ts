/**
 * BatchWrite as the service answers it: each mutation group is its own transaction, applied independently
 * (one failing leaves the others applied) and reported in one response naming its index with its status and,
 * when applied, its commit timestamp. A request whose total mutation count (index-aware, see
 * `mutation-count.ts`) exceeds the per-commit limit is rejected whole before any group is applied.
 *
 * Faults (rules on method `BatchWrite`): `code` without `afterItems` fails the call before anything is
 * applied; `afterItems: K` sends K responses and then breaks the stream with `code` (default UNAVAILABLE) —
 * the remaining groups are not applied, or, with `applyAfterBreak`, applied without a response (an answer
 * lost in transit); `items: [i, …]` answers `code` for those groups instead of applying them and goes on.
 *
 * Every request is recorded (groups, mutation count, each group's status and rows), so tests can count how
 * often a group was committed.
 */
import type * as grpc from '@grpc/grpc-js';
import type { ActiveFault } from '../common/faults';
import type { EmulatedDatabase } from './database';
import { toTimestamp } from './grpc-util';
import { Code, SpannerError, type WireValue } from './hooks';
import { tooManyMutations } from './messages';
import { mutationsCount } from './mutation-count';
import { protoToWire } from './values';
import type { MutationJson } from './writes';

/** What happened to one group of a request. */
export interface GroupOutcome {
  index: number;
  /** gRPC status code (0: applied). */
  code: number;
  /** Whether a response for the group reached the stream. */
  reported: boolean;
  /** Rows the group writes, as `Table [key values…]` (key values in wire form). */
  rows: string[];
}

/** One BatchWrite request as the emulator saw it. */
export interface BatchWriteRecord {
  database: string;
  groups: number;
  /** Index-aware mutation count of the whole request. */
  mutations: number;
  outcomes: GroupOutcome[];
  /** Set when the call itself failed (request-level rejection or broken stream). */
  error?: { code: number; message: string };
}

/** The last {@link BatchWriteLog.CAPACITY} requests. */
export class BatchWriteLog {
  static readonly CAPACITY = 5_000;
  private records: BatchWriteRecord[] = [];

  add(r: BatchWriteRecord): void {
    this.records.push(r);
    if (this.records.length > BatchWriteLog.CAPACITY) this.records.shift();
  }

  /** Every recorded request of `database` (or of all), oldest first. */
  list(database?: string): BatchWriteRecord[] {
    return this.records.filter((r) => !database || r.database === database);
  }

  clear(): void {
    this.records = [];
  }
}

interface BatchWriteRequest {
  session: string;
  mutationGroups?: Array<{ mutations?: MutationJson[] }>;
  requestOptions?: { transactionTag?: string };
  /** Streams with `allow_txn_exclusion` skip every group of the batch. */
  excludeTxnFromChangeStreams?: boolean;
}

/** `Table [key]` identities of the rows one mutation writes. */
function rowsOf(db: EmulatedDatabase, m: MutationJson): string[] {
  if (m.delete) {
    const table = db.schema.find(m.delete.table)?.name ?? m.delete.table;
    const keys = m.delete.keySet?.keys ?? [];
    return keys.map((k) => `${table} ${JSON.stringify((k.values ?? []).map(protoToWire))}`);
  }
  const w = m.insert ?? m.update ?? m.insertOrUpdate ?? m.replace;
  if (!w) return [];
  const table = db.schema.find(w.table);
  const cols = (w.columns ?? []).map((c) => c.toLowerCase());
  const at = (table?.primaryKey ?? []).map((k) => cols.indexOf(k.name.toLowerCase()));
  return (w.values ?? []).map((list) => {
    const key: WireValue[] = at.map((i) => (i < 0 ? null : protoToWire(list.values?.[i])));
    return `${table?.name ?? w.table} ${JSON.stringify(key)}`;
  });
}

function commitGroup(db: EmulatedDatabase, mutations: MutationJson[], tag: string, exclude: boolean) {
  const txn = db.begin(false, db.clock.nowNs(), tag);
  if (exclude) txn.excludeFromChangeStreams = true;
  try {
    const ns = db.commit(txn, mutations);
    return { status: { code: Code.OK }, commitTimestamp: toTimestamp(ns) };
  } catch (err) {
    const e = err instanceof SpannerError ? err : new SpannerError(Code.INTERNAL, String(err));
    return { status: { code: e.code, message: e.message } };
  }
}

/** Serves one BatchWrite call against `db`, honouring `fault`; the caller ends the stream. */
export async function serveBatchWrite(
  db: EmulatedDatabase,
  req: BatchWriteRequest,
  call: grpc.ServerWritableStream<unknown, unknown>,
  log: BatchWriteLog,
  fault?: ActiveFault,
): Promise<void> {
  const groups = req.mutationGroups ?? [];
  const record: BatchWriteRecord = {
    database: db.name,
    groups: groups.length,
    mutations: mutationsCount(
      db.schema,
      groups.flatMap((g) => g.mutations ?? []),
    ),
    outcomes: [],
  };
  log.add(record);
  const fail = (e: SpannerError): never => {
    record.error = { code: e.code, message: e.message };
    throw e;
  };
  const limit = db.limits.mutationsPerCommit;
  if (record.mutations > limit) fail(tooManyMutations(limit));
  const tag = req.requestOptions?.transactionTag ?? '';
  for (const [index, g] of groups.entries()) {
    if (call.cancelled) return;
    const mutations = g.mutations ?? [];
    const rows = mutations.flatMap((m) => rowsOf(db, m));
    const broken = fault?.afterItems !== undefined && index >= fault.afterItems;
    if (broken && !fault?.applyAfterBreak) break;
    const injected = fault?.items?.includes(index) && fault.code !== undefined ? fault : undefined;
    const answer = injected
      ? { status: { code: injected.code as number, message: injected.message ?? 'Injected group failure' } }
      : commitGroup(db, mutations, tag, req.excludeTxnFromChangeStreams === true);
    record.outcomes.push({ index, code: answer.status.code, reported: !broken, rows });
    if (!broken) call.write({ indexes: [index], ...answer });
  }
  if (fault?.afterItems !== undefined && fault.afterItems < groups.length)
    fail(new SpannerError(fault.code ?? Code.UNAVAILABLE, fault.message ?? 'Injected stream fault'));
}
