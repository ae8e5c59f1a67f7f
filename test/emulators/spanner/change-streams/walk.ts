/** Follows a stream's partition DAG like a reader: a child is queried only after all its parents finished. */

import type { ChangeStreamEngine } from '../../../../local/emulators/spanner/change-streams/engine';
import type { SchemaView } from '../../../../local/emulators/spanner/hooks';
import { collect, type Decoded, decode, gsqlQuery, ns, pgQuery } from './fixtures';

/** Everything a walk saw, in read order. */
export interface Walk {
  data: Array<Decoded & { token: string }>;
  heartbeats: number;
  partitionsRead: string[];
}

/** Reads `[start, end]` of `stream` across its whole DAG. */
export async function walkDag(
  engine: ChangeStreamEngine,
  schema: SchemaView,
  stream: string,
  start: bigint,
  end: bigint,
): Promise<Walk> {
  const pg = schema.dialect === 'POSTGRESQL';
  const run = (p: { start: bigint; token: string | null }) =>
    pg
      ? pgQuery(engine, schema, stream, { start: p.start, end, token: p.token, hb: 1000 })
      : gsqlQuery(engine, schema, stream, { start: p.start, end, token: p.token, hb: 1000 });
  const walk: Walk = { data: [], heartbeats: 0, partitionsRead: [] };
  const parentsOf = new Map<string, string[]>();
  const startOf = new Map<string, bigint>();
  const finished = new Set<string>();
  const scheduled = new Set<string>();
  const queue: string[] = [];
  const learn = (d: Decoded) => {
    for (const c of d.body.child_partitions as Array<{ token: string; parent_partition_tokens: string[] }>) {
      parentsOf.set(c.token, c.parent_partition_tokens);
      startOf.set(c.token, ns(d.body.start_timestamp));
      if (!scheduled.has(c.token)) {
        scheduled.add(c.token);
        queue.push(c.token);
      }
    }
  };
  for (const row of await collect(run({ start, token: null }).rows)) learn(decode(row, pg));
  for (let guard = 0; queue.length > 0 && guard < 10_000; guard++) {
    const i = queue.findIndex((tok) => (parentsOf.get(tok) ?? []).every((p) => finished.has(p)));
    if (i < 0) throw new Error('no child is ready: a parent was never read');
    const [token] = queue.splice(i, 1) as [string];
    walk.partitionsRead.push(token);
    for (const row of await collect(run({ start: startOf.get(token) ?? start, token }).rows)) {
      const d = decode(row, pg);
      if (d.kind === 'data') walk.data.push({ ...d, token });
      else if (d.kind === 'heartbeat') walk.heartbeats++;
      else learn(d);
    }
    finished.add(token);
  }
  return walk;
}
