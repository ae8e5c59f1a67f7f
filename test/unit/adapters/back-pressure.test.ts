/**
 * Consumers slower than Spanner, without the emulator. Both sources read raw PartialResultSets (ADR-1404,
 * ADR-3002) through the client's GAPIC layer: every row and record must arrive once to a slow consumer,
 * values split across sets merged; the change source sends one single-use request and gives its session back.
 */

import { PassThrough } from 'node:stream';
import type { Database } from '@google-cloud/spanner';
import { SpannerChangeSource } from '../../../shared/adapters/spanner/change-source';
import { SpannerSnapshotSource } from '../../../shared/adapters/spanner/snapshot-source';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { tableOf } from '../domain/support/table-schemas';

type Proto = { kind: 'stringValue'; stringValue: string };
const text = (v: string): Proto => ({ kind: 'stringValue', stringValue: v });
type Field = { name: string; type: { code: string; typeAnnotation?: string } };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Consumes slowly enough that the client's buffer fills and it starts probing. */
async function drainSlowly<T>(items: AsyncIterable<T>): Promise<T[]> {
  const got: T[] = [];
  for await (const item of items) {
    got.push(item);
    if (got.length % 10 === 0) await sleep(15);
  }
  return got;
}

const table = tableOf(
  'T',
  ['Id'],
  [
    ['Id', 'INT64'],
    ['Name', 'STRING'],
  ],
);

test('the snapshot source reads raw PartialResultSets: every row to a slow consumer, chunked values merged', async () => {
  const rows = Array.from({ length: 600 }, (_, i) => [
    text(String(9_007_199_254_740_000n + BigInt(i))),
    text(`n${i}`.repeat(i % 7 === 0 ? 40 : 1)),
  ]);
  const fields = table.columns.map((c) => ({ name: c.name, type: c.type }));
  // The wire as the service sends it: sets of 50 rows, and a long value of every 7th row split in two.
  const stream = new PassThrough({ objectMode: true });
  for (let i = 0; i < rows.length; i += 50) {
    const values = rows.slice(i, i + 50).flat();
    const cut = values.findIndex((v, k) => k % 2 === 1 && v.stringValue.length > 40);
    const head = cut < 0 ? values : values.slice(0, cut + 1);
    const tail = cut < 0 ? [] : values.slice(cut + 1);
    if (cut >= 0) {
      const long = head[cut]!.stringValue;
      head[cut] = text(long.slice(0, 9));
      tail.unshift(text(long.slice(9)));
    }
    stream.write({
      ...(i === 0 ? { metadata: { rowType: { fields } } } : {}),
      values: head,
      chunkedValue: cut >= 0,
    });
    if (tail.length > 0) stream.write({ values: tail });
  }
  stream.end();
  const requests: unknown[] = [];
  const spanner = {
    prepareGapicRequest_: (config: unknown, done: (err: unknown, fn: () => PassThrough) => void) => {
      requests.push(config);
      done(null, () => stream);
    },
  };
  const database = {
    batchTransaction: () => ({
      session: { formattedName_: 'sessions/s', parent: { parent: { parent: spanner } } },
      id: 't',
      commonHeaders_: { 'google-cloud-resource-prefix': 'db' },
    }),
  } as unknown as Database;
  const source = new SpannerSnapshotSource(database);
  const partition = JSON.stringify({ sql: 'SELECT Id, Name FROM T', token: 'AAE=', columns: ['Id', 'Name'] });
  const snapshot = {
    transaction: JSON.stringify({ session: 's', transaction: 't' }),
    readTimestamp: parseTimestamp('2025-01-01T00:00:00Z'),
  };
  const got = await drainSlowly(source.read(snapshot, partition, table));
  expect(got).toHaveLength(600);
  expect(got.map((r) => [r.Id, r.Name])).toEqual(rows.map((r) => [r[0]!.stringValue, r[1]!.stringValue]));
  expect(requests).toEqual([
    expect.objectContaining({
      method: 'executeStreamingSql',
      reqOpts: expect.objectContaining({
        session: 'sessions/s',
        transaction: { id: 't' },
        sql: 'SELECT Id, Name FROM T',
      }),
      headers: { 'google-cloud-resource-prefix': 'db' },
    }),
  ]);
});

test('the change source delivers every record to a slow consumer in one single-use request', async () => {
  const fields: Field[] = [{ name: 'read_json_s', type: { code: 'JSON', typeAnnotation: 'PG_JSONB' } }];
  const values = Array.from({ length: 400 }, (_, i) =>
    text(
      JSON.stringify({
        heartbeat_record: { timestamp: `2025-01-01T00:00:00.${String(i).padStart(9, '0')}Z` },
      }),
    ),
  );
  // Sets of 50 records, the first JSON text of every set split across the set before it.
  const stream = new PassThrough({ objectMode: true, highWaterMark: 2 });
  const sets: unknown[] = [];
  for (let i = 0; i < values.length; i += 50) {
    const chunk = values.slice(i, i + 50);
    const last = chunk[chunk.length - 1]!.stringValue;
    sets.push({
      ...(i === 0 ? { metadata: { rowType: { fields } } } : {}),
      values: [...chunk.slice(0, -1), text(last.slice(0, 7))],
      chunkedValue: true,
    });
    sets.push({ values: [text(last.slice(7))] });
  }
  (async () => {
    for (const set of sets) if (!stream.write(set)) await new Promise((r) => stream.once('drain', r));
    stream.end();
  })();
  const requests: Array<{ reqOpts: Record<string, unknown> }> = [];
  const session = {
    formattedName_: 'sessions/s',
    commonHeaders_: { 'google-cloud-resource-prefix': 'db' },
    parent: {
      parent: {
        parent: {
          prepareGapicRequest_: (
            config: { reqOpts: Record<string, unknown> },
            done: (err: unknown, fn: () => PassThrough) => void,
          ) => {
            requests.push(config);
            done(null, () => stream);
          },
        },
      },
    },
  };
  const released: unknown[] = [];
  const database = {
    sessionFactory_: {
      getSession: (cb: (err: unknown, s: unknown) => void) => cb(null, session),
      release: (s: unknown) => released.push(s),
    },
  } as unknown as Database;
  const source = new SpannerChangeSource(database, { dialect: 'POSTGRESQL', stream: 's' });
  const start = parseTimestamp('2025-01-01T00:00:00Z');
  const got = await drainSlowly(
    source.read({ partitionToken: 'p', from: start, to: start, heartbeatMs: 1000 }),
  );
  expect(got).toHaveLength(400);
  expect(got.map((r) => (r.kind === 'heartbeat' ? r.timestamp : null))).toEqual(
    values.map((_, i) => parseTimestamp(`2025-01-01T00:00:00.${String(i).padStart(9, '0')}Z`)),
  );
  expect(requests).toHaveLength(1);
  expect(requests[0]).toMatchObject({
    method: 'executeStreamingSql',
    headers: { 'google-cloud-resource-prefix': 'db' },
    reqOpts: {
      session: 'sessions/s',
      transaction: { singleUse: { readOnly: { strong: true, returnReadTimestamp: false } } },
      requestOptions: { priority: 'PRIORITY_LOW' },
    },
  });
  expect(released).toEqual([session]);
});
