/**
 * Issue 4 through the official client: a workload of multi-key, multi-table transactions over every column
 * type commits while partitions churn; walking the DAG returns every committed mod exactly once, per key in
 * commit order, with the right values, for every value capture type, in both dialects.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { type Database, Spanner } from '@google-cloud/spanner';
import { createTestDatabase, type TestDatabase } from '../../../../local/emulators/spanner/client';
import {
  type RunningSpannerEmulator,
  startSpannerEmulator,
} from '../../../../local/emulators/spanner/server';
import type { Dialect, JsonValue } from '../../../../shared/domain/change-record';
import { type Seen, walkDag } from './client-read';

const CAPTURE = ['OLD_AND_NEW_VALUES', 'NEW_ROW', 'NEW_VALUES', 'NEW_ROW_AND_OLD_VALUES'] as const;

function ddl(dialect: Dialect): string[] {
  if (dialect === 'POSTGRESQL')
    return [
      `CREATE TABLE singers (singerid bigint NOT NULL PRIMARY KEY, name varchar, score float8, ratio float4,
       active boolean, born date, updated timestamptz, photo bytea, balance numeric, meta jsonb, tags text[])`,
      `CREATE TABLE albums (singerid bigint NOT NULL, albumid varchar NOT NULL, plays bigint,
       PRIMARY KEY (singerid, albumid))`,
      ...CAPTURE.map(
        (c) => `CREATE CHANGE STREAM s_${c.toLowerCase()} FOR ALL WITH (value_capture_type = '${c}')`,
      ),
    ];
  return [
    `CREATE TABLE singers (singerid INT64 NOT NULL, name STRING(MAX), score FLOAT64, ratio FLOAT32, active BOOL,
     born DATE, updated TIMESTAMP, photo BYTES(MAX), balance NUMERIC, meta JSON, tags ARRAY<STRING(MAX)>)
     PRIMARY KEY (singerid)`,
    `CREATE TABLE albums (singerid INT64 NOT NULL, albumid STRING(MAX) NOT NULL, plays INT64)
     PRIMARY KEY (singerid, albumid)`,
    ...CAPTURE.map(
      (c) => `CREATE CHANGE STREAM s_${c.toLowerCase()} FOR ALL OPTIONS (value_capture_type = '${c}')`,
    ),
  ];
}

/** What the test expects a singer's values to read as in the records' JSON. */
function singerRow(id: number, t: number, dialect: Dialect) {
  const pg = dialect === 'POSTGRESQL';
  const write = {
    singerid: String(id),
    name: `n${t}`,
    score: t + 0.5,
    ratio: Spanner.float32(0.25),
    active: t % 2 === 0,
    born: '2001-02-03',
    updated: `2024-01-01T00:00:0${t % 10}.123456789Z`,
    photo: Buffer.from([t % 256, 1]),
    balance: pg ? Spanner.pgNumeric(`${t}.5`) : Spanner.numeric(`${t}.5`),
    meta: pg ? Spanner.pgJsonb({ t }) : { t },
    tags: [`a${t}`, null],
  };
  const expected: Record<string, JsonValue> = {
    name: `n${t}`,
    score: t + 0.5,
    ratio: 0.25,
    active: t % 2 === 0,
    born: '2001-02-03',
    updated: `2024-01-01T00:00:0${t % 10}.123456789Z`,
    photo: Buffer.from([t % 256, 1]).toString('base64'),
    balance: `${t}.5`,
    tags: [`a${t}`, null],
  };
  return { write, expected };
}

interface Committed {
  ts: bigint;
  table: string;
  modType: 'INSERT' | 'UPDATE' | 'DELETE';
  key: string;
  newValues: Record<string, JsonValue> | null;
}

/** Runs `count` transactions of 1–4 mods over both tables, churning every third commit. */
async function runWorkload(emu: RunningSpannerEmulator, db: Database, dialect: Dialect, count: number) {
  const live = new Set<string>();
  const committed: Committed[] = [];
  let seed = 11;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n;
  };
  for (let t = 0; t < count; t++) {
    const mods: Omit<Committed, 'ts'>[] = [];
    await db.runTransactionAsync(async (tx) => {
      mods.length = 0;
      const used = new Set<string>();
      const size = 1 + rnd(4);
      for (let m = 0; m < size; m++) {
        const album = rnd(3) === 0;
        const id = 1 + rnd(10);
        const table = album ? 'albums' : 'singers';
        const key = album
          ? JSON.stringify({ singerid: String(id), albumid: `a${id}` })
          : JSON.stringify({ singerid: String(id) });
        if (used.has(`${table}${key}`)) continue;
        used.add(`${table}${key}`);
        const keyCols = album ? { singerid: String(id), albumid: `a${id}` } : { singerid: String(id) };
        const exists = live.has(`${table}${key}`);
        if (exists && rnd(4) === 0) {
          tx.deleteRows(table, [album ? [String(id), `a${id}`] : String(id)]);
          mods.push({ table, modType: 'DELETE', key, newValues: null });
        } else if (album) {
          tx[exists ? 'update' : 'insert'](table, { ...keyCols, plays: String(t) });
          mods.push({ table, modType: exists ? 'UPDATE' : 'INSERT', key, newValues: { plays: String(t) } });
        } else {
          const { write, expected } = singerRow(id, t, dialect);
          tx[exists ? 'update' : 'insert'](table, write);
          mods.push({ table, modType: exists ? 'UPDATE' : 'INSERT', key, newValues: expected });
        }
      }
      const [resp] = await tx.commit();
      const ts = resp.commitTimestamp;
      const ns = BigInt(String(ts?.seconds ?? 0)) * 1_000_000_000n + BigInt(ts?.nanos ?? 0);
      for (const m of mods) {
        committed.push({ ...m, ts: ns });
        if (m.modType === 'DELETE') live.delete(`${m.table}${m.key}`);
        else live.add(`${m.table}${m.key}`);
      }
    });
    if (t % 3 === 2) emu.admin.churnNow();
  }
  return committed;
}

const idOf = (ts: bigint, table: string, modType: string, key: string) => `${ts}|${table}|${modType}|${key}`;

function checkWalk(data: Seen[], committed: Committed[], capture: (typeof CAPTURE)[number]) {
  const seen = data.flatMap((r) =>
    r.mods.map((m) => ({
      r,
      m,
      id: idOf(BigInt(r.commitTimestamp), r.tableName, r.modType, JSON.stringify(m.keys)),
    })),
  );
  // Exactly once: same multiset of (commit ts, table, mod type, key).
  expect(seen.map((s) => s.id).sort()).toEqual(
    committed.map((c) => idOf(c.ts, c.table, c.modType, c.key)).sort(),
  );
  // Per key in commit order (parents were read before children).
  const lastTs = new Map<string, bigint>();
  for (const s of seen) {
    const k = `${s.r.tableName}${JSON.stringify(s.m.keys)}`;
    const ts = BigInt(s.r.commitTimestamp);
    expect(ts).toBeGreaterThan(lastTs.get(k) ?? -1n);
    lastTs.set(k, ts);
  }
  // Values: what was written is what the record carries.
  const byId = new Map(committed.map((c) => [idOf(c.ts, c.table, c.modType, c.key), c]));
  for (const s of seen) {
    expect(s.r.valueCaptureType).toBe(capture);
    const want = byId.get(s.id)?.newValues;
    if (!want) continue;
    for (const [col, v] of Object.entries(want)) {
      const got = s.m.newValues[col];
      if (col === 'updated') expect(new Date(String(got)).getTime()).toBe(new Date(String(v)).getTime());
      else if (capture === 'NEW_ROW' || s.r.modType === 'INSERT' || col in s.m.newValues)
        expect(got).toEqual(v);
    }
    if (capture === 'NEW_VALUES' || capture === 'NEW_ROW') expect(s.m.oldValues).toEqual({});
  }
  // Transaction counts agree across partitions.
  const byTx = new Map<string, Seen[]>();
  for (const r of data) byTx.set(r.serverTransactionId, [...(byTx.get(r.serverTransactionId) ?? []), r]);
  let spread = 0;
  for (const records of byTx.values()) {
    const partitions = new Set(records.map((r) => r.token));
    if (partitions.size > 1) spread++;
    for (const r of records) {
      expect(r.numberOfRecordsInTransaction).toBe(records.length);
      expect(r.numberOfPartitionsInTransaction).toBe(partitions.size);
    }
    for (const p of partitions)
      expect(records.filter((r) => r.token === p && r.isLastRecordInTransactionInPartition)).toHaveLength(1);
  }
  expect(spread).toBeGreaterThan(0);
}

let emu: RunningSpannerEmulator;
const dbs: TestDatabase[] = [];

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, churnMs: 0, initialPartitions: 2 });
});

afterAll(async () => {
  for (const d of dbs) await d.close();
  await emu?.stop();
});

describe.each(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'] as const)('%s', (dialect) => {
  test('the DAG through five and more churns returns every committed mod once, in order, with its values', async () => {
    const d = await createTestDatabase(emu, dialect, ddl(dialect));
    dbs.push(d);
    const start = emu.admin.nowNs();
    const committed = await runWorkload(emu, d.database, dialect, 24);
    const end = emu.admin.nowNs();
    const info = emu.admin.changeStreamEngine(d.name)?.admin.partitions('s_new_row') ?? [];
    expect(info.filter((p) => p.endNs !== null).length).toBeGreaterThanOrEqual(5);
    expect(info.some((p) => p.parents.length === 2)).toBe(true);
    for (const capture of CAPTURE) {
      const walk = await walkDag(d.database, dialect, `s_${capture.toLowerCase()}`, start, end);
      expect(walk.partitionsRead.length).toBeGreaterThanOrEqual(7);
      checkWalk(walk.data, committed, capture);
    }
  }, 40_000);
});
