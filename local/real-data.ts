/**
 * "Real data": a seeded generator of the values a real database holds, for the end-to-end suite. Two tables
 * in either dialect — `RealValues` with a column of every scalar type and an array of every type (GoogleSQL's
 * PROTO and ENUM of the local stack's proto bundle included), filled with
 * each type's extremes, NULLs, NULL array elements and large values (1 MiB strings and bytes), and `RealKeys`
 * with a composite key over the whole INT64 range, TIMESTAMPs a nanosecond apart and Unicode strings — and a
 * workload of inserts, updates and deletes (several per transaction) that journals every mod it commits.
 */
import type { Database } from '@google-cloud/spanner';
import type { Dialect } from '../shared/domain/change-record';
import { destinationPart } from '../shared/domain/table-rules';
import {
  formatTimestamp,
  fromSecondsAndNanos,
  parseTimestamp,
  type Timestamp,
} from '../shared/domain/timestamp';
import type { ColumnKind, DemoColumn, DemoTable, ScalarKind } from './demo-schema';
import { encodePayload, LEVELS } from './proto-types';
import type { Random } from './random';
import type { WireCell, WireRow } from './values';
import type { CommittedMod } from './workload';

const SCALARS: ScalarKind[] = [
  'int',
  'string',
  'numeric',
  'float',
  'float32',
  'bool',
  'date',
  'timestamp',
  'bytes',
  'json',
  'uuid',
];

/** GoogleSQL's types beyond the common ones: PROTO and ENUM of the local stack's bundle. */
const GOOGLE_SQL_ONLY: ScalarKind[] = ['proto', 'enum'];

/**
 * The two real-data tables of a dialect (PostgreSQL names in lower case). With `schema`, the same tables in
 * that named schema (`sch.RealValues`, …), sent to BigQuery by the all-tables rule (`sch__realvalues`, …).
 */
export function realDataTables(dialect: Dialect, schema?: string): { values: DemoTable; keys: DemoTable } {
  const pg = dialect === 'POSTGRESQL';
  const n = (s: string) => (pg ? s.toLowerCase() : s);
  const tables = realDataTablesIn(dialect, n);
  if (!schema) return tables;
  const inSchema = (t: DemoTable): DemoTable => {
    const name = `${n(schema)}.${t.name}`;
    return { ...t, name, replica: destinationPart(name), history: `${destinationPart(name)}_history` };
  };
  return { values: inSchema(tables.values), keys: inSchema(tables.keys) };
}

function realDataTablesIn(
  dialect: Dialect,
  n: (s: string) => string,
): { values: DemoTable; keys: DemoTable } {
  const kinds = dialect === 'POSTGRESQL' ? SCALARS : [...SCALARS, ...GOOGLE_SQL_ONLY];
  const col = (name: string, kind: ColumnKind, nullable = true): DemoColumn => ({
    name: n(name),
    kind,
    nullable,
  });
  const values: DemoTable = {
    name: n('RealValues'),
    key: [n('Id')],
    columns: [
      col('Id', 'int', false),
      ...kinds.map((k) => col(`V_${k}`, k)),
      ...kinds.map((k) => col(`A_${k}`, `${k}[]` as ColumnKind)),
    ],
    replica: 'real_values',
    history: 'real_values_history',
  };
  const keys: DemoTable = {
    name: n('RealKeys'),
    key: [n('K1'), n('K2'), n('K3')],
    columns: [
      col('K1', 'int', false),
      col('K2', 'timestamp', false),
      col('K3', 'string', false),
      col('V', 'string'),
    ],
    replica: 'real_keys',
    history: 'real_keys_history',
  };
  return { values, keys };
}

const INT64 = [
  '-9223372036854775808',
  '9223372036854775807',
  '0',
  '-1',
  '9007199254740993',
  '-9007199254740993',
];
const TIMESTAMPS = [
  '0001-01-01T00:00:00.000000000Z',
  '9999-12-31T23:59:59.999999999Z',
  '1970-01-01T00:00:00.000000001Z',
  '1969-12-31T23:59:59.999999999Z',
  '2024-02-29T12:34:56.123456789Z',
];
const UNICODE = [
  '',
  'plain',
  'ünïcødé ✓',
  '😀👩‍👩‍👧 family',
  'עברית العربية',
  'tab\tnew\nline "quoted" \\slash',
];

/** Extremes and ordinary values of each scalar kind, in the wire form mutations take. */
function extremes(kind: ScalarKind, pg: boolean): WireCell[] {
  switch (kind) {
    case 'int':
      return INT64;
    case 'numeric':
      return pg
        ? [`${'9'.repeat(38)}.${'9'.repeat(38)}`, `-${'9'.repeat(38)}`, `0.${'0'.repeat(37)}1`, '0', '-12.5']
        : [
            '99999999999999999999999999999.999999999',
            '-99999999999999999999999999999.999999999',
            '0.000000001',
            '0',
          ];
    case 'float':
      return [
        'NaN',
        'Infinity',
        '-Infinity',
        0,
        5e-324,
        1.7976931348623157e308,
        -2.2250738585072014e-308,
        0.1,
      ];
    case 'float32':
      return [
        'NaN',
        'Infinity',
        '-Infinity',
        3.4028234663852886e38,
        Math.fround(1.4e-45),
        Math.fround(-1.1754943508222875e-38),
        0.5,
      ];
    case 'bool':
      return [true, false];
    case 'date':
      return ['0001-01-01', '9999-12-31', '1970-01-01', '2024-02-29'];
    case 'timestamp':
      return TIMESTAMPS;
    case 'bytes':
      return ['', Buffer.from(Array.from({ length: 256 }, (_, i) => i)).toString('base64')];
    case 'json':
      return [
        '{}',
        '[]',
        '{"big":12345678901234567890,"min":-9223372036854775808,"pi":3.141592653589793,"e":1.5e+300}',
        '{"ünï":"✓","list":[1,"two",null,true,{"k":[]}]}',
        nested(40),
      ];
    case 'uuid':
      return ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'];
    case 'proto':
      return PAYLOADS;
    case 'enum':
      return LEVELS.map(String);
    default:
      return UNICODE;
  }
}

/** Messages: the empty one (zero bytes), INT64 extremes, Unicode, raw bytes, nested and repeated fields. */
const PAYLOADS = [
  encodePayload({}),
  encodePayload({ id: '-9223372036854775808', label: 'ünïcødé ✓ 😀', level: -2147483648 }),
  encodePayload({ id: '9223372036854775807', level: 2147483647, blob: Buffer.from([0, 255, 128]) }),
  encodePayload({
    counts: ['-9223372036854775808', '0', '9223372036854775807'],
    parts: [{ name: 'a', weight: 0.1 }, {}, { name: 'b', weight: -1e300 }],
  }),
];

function nested(depth: number): string {
  return depth === 0 ? '"bottom"' : `{"d":${nested(depth - 1)}}`;
}

/** A large value of a kind (1 MiB), or undefined when the kind has none. */
function large(kind: ScalarKind, rng: Random): WireCell | undefined {
  if (kind === 'string') return 'ç🙂x'.repeat(1 + rng.int(0, 2)).repeat(90_000);
  if (kind === 'bytes') return Buffer.alloc(1024 * 1024, rng.int(0, 255)).toString('base64');
  if (kind === 'proto') return encodePayload({ blob: Buffer.alloc(1024 * 1024, rng.int(0, 255)) });
  return undefined;
}

function random(kind: ScalarKind, rng: Random, pg: boolean): WireCell {
  if (rng.chance(0.6)) return rng.pick(extremes(kind, pg));
  switch (kind) {
    case 'int':
      return (BigInt(rng.int(-(2 ** 31), 2 ** 31)) * 4294967296n + BigInt(rng.int(0, 2 ** 31))).toString();
    case 'uuid':
      return `${rng.int(0, 0xffffffff).toString(16).padStart(8, '0')}-0000-4000-8000-${rng.int(0, 0xffffff).toString(16).padStart(12, '0')}`;
    case 'timestamp':
      return formatTimestamp(fromSecondsAndNanos(String(rng.int(-2e9, 2e9)), rng.int(0, 999_999_999)));
    default:
      return rng.pick(extremes(kind, pg));
  }
}

/** A value of a column: NULL now and then, a large value rarely, NULL array elements in arrays. */
function cell(column: DemoColumn, rng: Random, pg: boolean): WireCell {
  if (column.nullable && rng.chance(0.12)) return null;
  if (column.kind.endsWith('[]')) {
    const element = column.kind.slice(0, -2) as ScalarKind;
    return Array.from({ length: rng.int(0, 4) }, () =>
      rng.chance(0.15) ? null : (random(element, rng, pg) as string),
    );
  }
  const kind = column.kind as ScalarKind;
  if (rng.chance(0.02)) {
    const big = large(kind, rng);
    if (big !== undefined) return big;
  }
  return random(kind, rng, pg);
}

/** The seeded real-data workload on one database. */
export class RealDataWorkload {
  readonly journal: CommittedMod[] = [];
  lastCommit: Timestamp | null = null;
  private readonly live = new Map<DemoTable, Map<string, WireRow>>();
  private nextId = 1n;

  constructor(
    private readonly database: Database,
    private readonly dialect: Dialect,
    private readonly rng: Random,
    readonly tables = realDataTables(dialect),
  ) {
    this.live.set(this.tables.values, new Map());
    this.live.set(this.tables.keys, new Map());
  }

  private get pg(): boolean {
    return this.dialect === 'POSTGRESQL';
  }

  private valuesRow(id: string): WireRow {
    const row: WireRow = {};
    for (const c of this.tables.values.columns)
      row[c.name] = c.name === this.tables.values.key[0] ? id : cell(c, this.rng, this.pg);
    return row;
  }

  private keysRow(): WireRow {
    const [k1, k2, k3, v] = this.tables.keys.columns.map((c) => c.name) as [string, string, string, string];
    // Keys a nanosecond apart, over the whole INT64 range, and Unicode text.
    const base = parseTimestamp(this.rng.pick(TIMESTAMPS.slice(2)));
    return {
      [k1]: this.rng.pick(INT64),
      [k2]: formatTimestamp((base + BigInt(this.rng.int(-3, 3))) as Timestamp),
      [k3]: this.rng.pick(UNICODE),
      [v]: this.rng.pick(UNICODE),
    };
  }

  private id(table: DemoTable, row: WireRow): string {
    return JSON.stringify(table.key.map((k) => row[k]));
  }

  /** Inserts `count` rows of each table without journaling them (a backfill brings them over). */
  async prefill(count: number): Promise<void> {
    for (const table of [this.tables.values, this.tables.keys]) {
      const rows = new Map<string, WireRow>();
      for (let i = 0; i < count; i++) {
        const row = table === this.tables.values ? this.valuesRow(String(this.nextId++)) : this.keysRow();
        rows.set(this.id(table, row), row);
      }
      const all = [...rows.values()];
      for (let i = 0; i < all.length; i += 20)
        await this.database.table(table.name).insert(all.slice(i, i + 20));
      for (const row of all) this.live.get(table)?.set(this.id(table, row), row);
    }
  }

  /** The writes of one transaction: each key at most once. */
  private plan(): Array<{ table: DemoTable; modType: CommittedMod['modType']; row: WireRow }> {
    const writes: Array<{ table: DemoTable; modType: CommittedMod['modType']; row: WireRow }> = [];
    const touched = new Set<string>();
    for (let i = 0, n = this.rng.int(1, 6); i < n; i++) {
      const table = this.rng.chance(0.5) ? this.tables.values : this.tables.keys;
      const live = this.live.get(table) as Map<string, WireRow>;
      const roll = this.rng.next();
      const existing = live.size > 0 ? [...live.values()][this.rng.int(0, live.size - 1)] : undefined;
      let write: (typeof writes)[number];
      if (!existing || roll < 0.45) {
        const row = table === this.tables.values ? this.valuesRow(String(this.nextId++)) : this.keysRow();
        if (live.has(this.id(table, row))) continue;
        write = { table, modType: 'INSERT', row };
      } else if (roll < 0.8) {
        const key = Object.fromEntries(table.key.map((k) => [k, existing[k] ?? null]));
        const some = table.columns.filter((c) => !table.key.includes(c.name) && this.rng.chance(0.4));
        const cols =
          some.length > 0 ? some : table.columns.filter((c) => !table.key.includes(c.name)).slice(0, 1);
        write = {
          table,
          modType: 'UPDATE',
          row: { ...key, ...Object.fromEntries(cols.map((c) => [c.name, cell(c, this.rng, this.pg)])) },
        };
      } else {
        write = {
          table,
          modType: 'DELETE',
          row: Object.fromEntries(table.key.map((k) => [k, existing[k] ?? null])),
        };
      }
      const id = `${table.name} ${this.id(table, write.row)}`;
      if (touched.has(id)) continue;
      touched.add(id);
      writes.push(write);
    }
    return writes;
  }

  /** Commits one seeded transaction and journals its mods. */
  async step(): Promise<void> {
    const writes = this.plan();
    if (writes.length === 0) return;
    const at = await this.database.runTransactionAsync(async (tx) => {
      for (const w of writes) {
        if (w.modType === 'INSERT') tx.insert(w.table.name, w.row);
        else if (w.modType === 'UPDATE') tx.update(w.table.name, w.row);
        else tx.deleteRows(w.table.name, [w.table.key.map((k) => w.row[k] as string)]);
      }
      const [response] = await tx.commit();
      const ts = response.commitTimestamp as { seconds?: unknown; nanos?: unknown };
      return fromSecondsAndNanos(String(ts.seconds ?? 0), Number(ts.nanos ?? 0));
    });
    const commitTimestamp = formatTimestamp(at);
    for (const w of writes) {
      const live = this.live.get(w.table) as Map<string, WireRow>;
      const id = this.id(w.table, w.row);
      if (w.modType === 'DELETE') live.delete(id);
      else live.set(id, { ...(live.get(id) ?? {}), ...w.row });
      const keys = Object.fromEntries(w.table.key.map((k) => [k, String(w.row[k])]));
      this.journal.push({ table: w.table.name, keys, modType: w.modType, commitTimestamp });
    }
    if (this.lastCommit === null || at > this.lastCommit) this.lastCommit = at;
  }
}
