/**
 * The change-source contract against the Spanner emulator through the official client, plus what only the
 * real adapter does: request options on the wire and gRPC errors thrown as they come.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import {
  type ChangeStreamEngine,
  createChangeStreamEngine,
} from '../../local/emulators/spanner/change-streams/engine';
import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { SpannerChangeSource } from '../../shared/adapters/spanner/change-source';
import type { Dialect } from '../../shared/domain/change-record';
import { classifyError } from '../../shared/domain/errors';
import { fromNanos, fromSecondsAndNanos, type Timestamp } from '../../shared/domain/timestamp';
import { type ChangeSourceHarness, changeSourceContract } from './change-source.contract';

let emu: RunningSpannerEmulator;
const engines = new Map<string, ChangeStreamEngine>();

beforeAll(async () => {
  emu = await startSpannerEmulator({
    port: 0,
    changeStreams: (db) => {
      const engine = createChangeStreamEngine({ now: () => emu.admin.nowNs(), initialPartitions: 2 });
      engines.set(db.name, engine);
      return engine;
    },
  });
});

afterAll(async () => {
  for (const e of engines.values()) e.admin.close();
  await emu?.stop();
});

const SCHEMA: Record<Dialect, { table: string; ddl: string[]; id: string; value: string }> = {
  GOOGLE_STANDARD_SQL: {
    table: 'Items',
    id: 'Id',
    value: 'Value',
    ddl: [
      'CREATE TABLE Items (Id STRING(MAX) NOT NULL, Value STRING(MAX)) PRIMARY KEY (Id)',
      'CREATE CHANGE STREAM Changes FOR ALL',
    ],
  },
  POSTGRESQL: {
    table: 'items',
    id: 'id',
    value: 'value',
    ddl: [
      'CREATE TABLE items (id varchar NOT NULL PRIMARY KEY, value varchar)',
      'CREATE CHANGE STREAM changes FOR ALL',
    ],
  },
};

/** A fresh database with one table and a change stream on it. */
async function spannerHarness(dialect: Dialect): Promise<ChangeSourceHarness & { db: TestDatabase }> {
  const s = SCHEMA[dialect];
  const db = await createTestDatabase(emu, dialect, s.ddl);
  const engine = engines.get(db.name)!;
  const stream = dialect === 'POSTGRESQL' ? 'changes' : 'Changes';
  return {
    db,
    source: new SpannerChangeSource(db.database, {
      dialect,
      stream,
      priority: 'low',
      requestTag: 'sluice-test',
    }),
    table: s.table,
    now: () => fromNanos(emu.admin.nowNs()),
    async commit(rows): Promise<Timestamp> {
      const [resp] = await db.database
        .table(s.table)
        .upsert(rows.map((r) => ({ [s.id]: r.id, [s.value]: r.value })));
      const ts = resp.commitTimestamp!;
      return fromSecondsAndNanos(String(ts.seconds), ts.nanos ?? 0);
    },
    async split() {
      const live = engine.admin
        .partitions(stream)
        .filter((p) => p.endNs === null)
        .map((p) => p.token);
      engine.admin.churnNow(stream);
      const ended = new Set(
        engine.admin
          .partitions(stream)
          .filter((p) => p.endNs !== null)
          .map((p) => p.token),
      );
      return live.filter((t) => ended.has(t));
    },
    close: () => db.close(),
  };
}

changeSourceContract('Spanner emulator', spannerHarness);

describe('SpannerChangeSource specifics', () => {
  it.each<Dialect>(['POSTGRESQL'])(
    'throws a gRPC error as is, for the caller to classify (%s)',
    async (dialect) => {
      const h = await spannerHarness(dialect);
      try {
        const t = await h.commit([{ id: 'x', value: 'y' }]);
        const read = async () => {
          for await (const _ of h.source.read({
            partitionToken: 'no-such-token',
            from: t,
            to: t,
            heartbeatMs: 200,
          }));
        };
        const err: unknown = await read().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(Error);
        expect(typeof (err as { code?: unknown }).code).toBe('number');
        expect(classifyError(err)).not.toBe('retryable');
      } finally {
        await h.close();
      }
    },
  );
});
