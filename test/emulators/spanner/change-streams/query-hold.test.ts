/**
 * A held change-stream query, through the official client: the partition query that sends its
 * child-partitions record stays open right after it (the record already delivered to the client) until the
 * test releases it; other queries are not held; the controls work by handle and over HTTP.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import type { Database } from '@google-cloud/spanner';
import type { ChangeRecord, ChildPartitionsRecord } from '../../../../shared/domain/change-record';
import { decodeGoogleSqlRow } from '../../../../shared/domain/change-record-decode';
import { changeStreamQuery, parseStreamName } from '../../../../shared/domain/change-stream-query';
import { fromNanos } from '../../../../shared/domain/timestamp';
import { googleSqlDatabaseForFile } from '../support/google-sql-database';
import { readStream } from './client-read';

const spanner = googleSqlDatabaseForFile(
  ['CREATE TABLE T (Id INT64 NOT NULL, V STRING(MAX)) PRIMARY KEY (Id)', 'CREATE CHANGE STREAM S FOR T'],
  { churnMs: 0 },
);

/** A query of one partition over 3 s from `start`: the records as they arrive, and whether it ended. */
function follow(database: Database, token: string, start: bigint) {
  const q = changeStreamQuery({
    dialect: 'GOOGLE_STANDARD_SQL',
    stream: parseStreamName('S'),
    start: fromNanos(start),
    end: fromNanos(start + 3_000_000_000n),
    partitionToken: token,
    heartbeatMillis: 200,
  });
  const seen: ChangeRecord[] = [];
  const state = { ended: false };
  const stream = database.runStream({ sql: q.sql, params: q.params, types: q.types }, { strong: true });
  const done = new Promise<void>((resolve, reject) => {
    stream
      .on('data', (row) => seen.push(...decodeGoogleSqlRow(row)))
      .on('error', reject)
      .on('end', () => {
        state.ended = true;
        resolve();
      });
  });
  return { seen, state, done };
}

async function until(what: string, ok: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const roots = async () =>
  (await readStream(spanner.db.database, 'GOOGLE_STANDARD_SQL', 'S', { start: spanner.emu.admin.nowNs() }))
    .flatMap((r) => (r as ChildPartitionsRecord).childPartitions)
    .map((c) => c.token);

test('the query that sends its child-partitions record stays open after it until released', async () => {
  const tokens = await roots();
  const start = spanner.emu.admin.nowNs();
  const id = spanner.emu.admin.holdChangeStreamQueryAfterEnd({ database: spanner.db.name });
  // The initial query (no partition token) is never held.
  expect(await roots()).toEqual(tokens);
  const queries = tokens.map((t) => follow(spanner.db.database, t, start));
  const [event] = spanner.emu.admin.churnNow({ database: spanner.db.name });
  const split = tokens.indexOf(event!.parents[0]!);
  const held = queries[split]!;
  await until('the child-partitions record', () => held.seen.some((r) => r.kind === 'child-partitions'));
  expect(spanner.emu.admin.changeStreamHolds()).toEqual([{ id, held: event!.parents[0], released: false }]);
  // Another query of the same partition is not held: the hold struck once.
  const again = follow(spanner.db.database, event!.parents[0]!, start);
  await again.done;
  expect(again.seen.filter((r) => r.kind === 'child-partitions')).toHaveLength(1);
  expect(held.state.ended).toBe(false);
  expect(spanner.emu.admin.releaseChangeStreamQuery(id)).toBe(true);
  await held.done;
  expect(held.seen.filter((r) => r.kind === 'child-partitions')).toHaveLength(1);
  expect(spanner.emu.admin.changeStreamHolds()).toEqual([{ id, held: event!.parents[0], released: true }]);
  expect(spanner.emu.admin.releaseChangeStreamQuery(999)).toBe(false);
  // The other root was not held: it ends at the end of its window.
  queries.splice(split, 1);
  for (const q of queries) await q.done;
});

test('over HTTP: a hold of one partition, listed and released', async () => {
  const post = async (path: string, body: unknown) =>
    (await fetch(`${spanner.emu.adminUrl}${path}`, { method: 'POST', body: JSON.stringify(body) })).json();
  const active = spanner.emu.admin
    .changeStreamEngine(spanner.db.name)!
    .admin.partitions()
    .filter((p) => p.endNs === null)
    .map((p) => p.token);
  const start = spanner.emu.admin.nowNs();
  const events = spanner.emu.admin.churnNow({ database: spanner.db.name });
  expect(events).toHaveLength(1);
  const ended = events[0]!.parents[0]!;
  expect(active).toContain(ended);
  const { id } = (await post('/change-streams/hold-after-end', {
    database: spanner.db.name,
    partition: ended,
  })) as {
    id: number;
  };
  // A query of an ended partition reaches its end at once, and is held there.
  const q = follow(spanner.db.database, ended, start);
  await until('the child-partitions record', () => q.seen.some((r) => r.kind === 'child-partitions'));
  const holds = (await (await fetch(`${spanner.emu.adminUrl}/change-streams/holds`)).json()) as Array<{
    id: number;
  }>;
  expect(holds.find((h) => h.id === id)).toEqual({ id, partition: ended, held: ended, released: false });
  expect(q.state.ended).toBe(false);
  expect(await post('/change-streams/release', { id })).toEqual({ released: true });
  await q.done;
});
