/**
 * A consumer slower than Spanner makes the client's `PartialResultStream` probe for back-pressure by pushing
 * `undefined` chunks (`_tryResume`, @google-cloud/spanner 8.x). The snapshot source and the change source read
 * the client's real stream here — fed with wire-format PartialResultSets, no emulator — through a consumer
 * that sleeps on every row, and must deliver every row once, no probe as a row, and no stream error.
 */

import { PassThrough } from 'node:stream';
import type { Database } from '@google-cloud/spanner';
import { partialResultStream } from '@google-cloud/spanner/build/src/partial-result-stream';
import { SpannerChangeSource } from '../../../shared/adapters/spanner/change-source';
import { STREAM_RESUME_PROBES } from '../../../shared/adapters/spanner/result-rows';
import { SpannerSnapshotSource } from '../../../shared/adapters/spanner/snapshot-source';
import type { TableSchema } from '../../../shared/domain/information-schema';
import { parseTimestamp } from '../../../shared/domain/timestamp';

type Proto = { kind: 'stringValue'; stringValue: string };
const text = (v: string): Proto => ({ kind: 'stringValue', stringValue: v });
type Field = { name: string; type: { code: string; typeAnnotation?: string } };

/** A request function serving `rows` in PartialResultSets of 50 rows, each set with a resume token. */
function serve(fields: Field[], rows: Proto[][]) {
  return () => {
    const out = new PassThrough({ objectMode: true });
    for (let i = 0; i < rows.length; i += 50) {
      out.write({
        ...(i === 0 ? { metadata: { rowType: { fields } } } : {}),
        values: rows.slice(i, i + 50).flat(),
        resumeToken: Buffer.from(String(i + 50)),
        ...(i + 50 >= rows.length ? { last: true } : {}),
      });
    }
    out.end();
    return out;
  };
}

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

const table: TableSchema = {
  name: 'T',
  columns: [
    { name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 },
    { name: 'Name', type: { code: 'STRING' }, nullable: true, ordinalPosition: 2 },
  ],
  primaryKey: ['Id'],
};

test('the snapshot source delivers every row to a slow consumer, skipping the probes', async () => {
  const rows = Array.from({ length: 600 }, (_, i) => [
    text(String(9_007_199_254_740_000n + BigInt(i))),
    text(`n${i}`),
  ]);
  const fields = table.columns.map((c) => ({ name: c.name, type: c.type }));
  const probes: number[] = [];
  const database = {
    batchTransaction: () => ({
      executeStream: (request: { maxResumeRetries?: number }) => {
        probes.push(request.maxResumeRetries ?? 20);
        const stream = partialResultStream(serve(fields, rows), {
          maxResumeRetries: request.maxResumeRetries,
        });
        stream.on('resumed', () => probes.push(-1));
        return stream;
      },
    }),
  } as unknown as Database;
  const source = new SpannerSnapshotSource(database);
  const partition = JSON.stringify({ sql: 'SELECT Id, Name FROM T', token: '', columns: ['Id', 'Name'] });
  const snapshot = {
    transaction: JSON.stringify({ session: 's', transaction: 't' }),
    readTimestamp: parseTimestamp('2025-01-01T00:00:00Z'),
  };
  const got = await drainSlowly(source.read(snapshot, partition, table));
  expect(got).toHaveLength(600);
  expect(got.map((r) => r.Id)).toEqual(rows.map((r) => r[0]!.stringValue));
  expect(got[599]).toEqual({ Id: '9007199254740599', Name: 'n599' });
  expect(probes[0]).toBe(STREAM_RESUME_PROBES);
  // The slow consumer did make the client pause and resume (so probes were pushed and skipped).
  expect(probes.filter((p) => p === -1).length).toBeGreaterThan(0);
});

test('the change source delivers every record to a slow consumer, skipping the probes', async () => {
  const fields: Field[] = [{ name: 'read_json_s', type: { code: 'JSON', typeAnnotation: 'PG_JSONB' } }];
  const rows = Array.from({ length: 400 }, (_, i) => [
    text(
      JSON.stringify({
        heartbeat_record: { timestamp: `2025-01-01T00:00:00.${String(i).padStart(9, '0')}Z` },
      }),
    ),
  ]);
  let resumed = 0;
  const database = {
    runStream: (query: { maxResumeRetries?: number }) => {
      const stream = partialResultStream(serve(fields, rows), { maxResumeRetries: query.maxResumeRetries });
      stream.on('resumed', () => resumed++);
      return stream;
    },
  } as unknown as Database;
  const source = new SpannerChangeSource(database, { dialect: 'POSTGRESQL', stream: 's' });
  const start = parseTimestamp('2025-01-01T00:00:00Z');
  const got = await drainSlowly(
    source.read({ partitionToken: 'p', from: start, to: start, heartbeatMs: 1000 }),
  );
  expect(got).toHaveLength(400);
  expect(got.every((r) => r.kind === 'heartbeat')).toBe(true);
  expect(resumed).toBeGreaterThan(0);
});
