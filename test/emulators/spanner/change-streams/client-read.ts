/**
 * Test helpers that read change streams the way the pipeline does: the official client's
 * `database.runStream(query, {strong: true})`, the shared query builder and the shared record decoders.
 */
import type { Database } from '@google-cloud/spanner';
import type {
  ChangeRecord,
  ChildPartitionsRecord,
  DataChangeRecord,
  Dialect,
} from '../../../../shared/domain/change-record';
import { decodeGoogleSqlRow, decodePostgresRow } from '../../../../shared/domain/change-record-decode';
import { changeStreamQuery, parseStreamName } from '../../../../shared/domain/change-stream-query';
import { fromNanos } from '../../../../shared/domain/timestamp';

/** One change-stream query's arguments. */
export interface ReadArgs {
  start: bigint | null;
  end?: bigint | null;
  token?: string | null;
  heartbeatMs?: number;
}

/** Runs one change-stream query to its end and decodes every record. */
export async function readStream(
  database: Database,
  dialect: Dialect,
  stream: string,
  args: ReadArgs,
): Promise<ChangeRecord[]> {
  const q = changeStreamQuery({
    dialect,
    stream: parseStreamName(stream),
    start: fromNanos(args.start ?? 0n),
    end: args.end === undefined || args.end === null ? null : fromNanos(args.end),
    partitionToken: args.token ?? null,
    heartbeatMillis: args.heartbeatMs ?? 1000,
  });
  // A NULL start is one of the error cases: the builder always binds one, so blank it here.
  const params = args.start === null ? { ...q.params, [Object.keys(q.params)[0] as string]: null } : q.params;
  const [rows] = await database.run({ sql: q.sql, params, types: q.types }, { strong: true });
  return rows.flatMap((row) =>
    dialect === 'POSTGRESQL' ? [decodePostgresRow(row)] : decodeGoogleSqlRow(row),
  );
}

/** A data-change record and the partition it came from. */
export type Seen = DataChangeRecord & { token: string };

/** Everything a walk of the partition DAG returned, in read order. */
export interface DagWalk {
  data: Seen[];
  heartbeats: number;
  partitionsRead: string[];
}

/**
 * Follows the DAG from the initial query over `[start, end]`, reading a child only after all of its parents
 * finished, and each child token once (merges are announced by both parents).
 */
export async function walkDag(
  database: Database,
  dialect: Dialect,
  stream: string,
  start: bigint,
  end: bigint,
): Promise<DagWalk> {
  const walk: DagWalk = { data: [], heartbeats: 0, partitionsRead: [] };
  const parentsOf = new Map<string, string[]>();
  const startOf = new Map<string, bigint>();
  const finished = new Set<string>();
  const queue: string[] = [];
  const learn = (r: ChildPartitionsRecord) => {
    for (const c of r.childPartitions) {
      if (parentsOf.has(c.token)) continue;
      parentsOf.set(c.token, c.parentPartitionTokens);
      startOf.set(c.token, r.startTimestamp);
      queue.push(c.token);
    }
  };
  for (const r of await readStream(database, dialect, stream, { start, end, token: null }))
    if (r.kind === 'child-partitions') learn(r);
    else throw new Error(`the initial query returned a ${r.kind} record`);
  for (let guard = 0; queue.length > 0 && guard < 1000; guard++) {
    const i = queue.findIndex((t) => (parentsOf.get(t) ?? []).every((p) => finished.has(p)));
    if (i < 0) throw new Error('no child is ready: a parent was never read');
    const [token] = queue.splice(i, 1) as [string];
    walk.partitionsRead.push(token);
    const records = await readStream(database, dialect, stream, {
      start: startOf.get(token) ?? start,
      end,
      token,
    });
    for (const r of records) {
      if (r.kind === 'data-change') walk.data.push({ ...r, token });
      else if (r.kind === 'heartbeat') walk.heartbeats++;
      else learn(r);
    }
    finished.add(token);
  }
  return walk;
}
