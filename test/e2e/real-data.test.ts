/**
 * Real data end to end, in both dialects: the seeded real-data tables (every type with its extremes, NULLs,
 * NULL array elements, 1 MiB values, composite keys over the whole INT64 range and TIMESTAMPs a nanosecond
 * apart) are pre-filled and loaded by the start-at-snapshot backfill, then changed by a seeded workload while
 * replication runs, with the stream carrying old values (GoogleSQL, `NEW_ROW_AND_OLD_VALUES`) or not
 * (PostgreSQL, `NEW_ROW`). After catch-up every replica equals Spanner row for row — compared in Spanner's
 * wire form, JSON as exact text and TIMESTAMP keys at nanoseconds — and the history holds every committed mod.
 * GoogleSQL's table has PROTO and ENUM columns (and arrays of them): BYTES holding the serialized message and
 * INT64 holding the enum's number in the replica. Halfway through, the message gains a field (ALTER PROTO
 * BUNDLE UPDATE) and the ENUM array column becomes ARRAY<INT64> while replication runs.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { LEVELS, PROTO_MESSAGE, protoDescriptors } from '../../local/proto-types';
import { Random } from '../../local/random';
import { RealDataWorkload, realDataTables } from '../../local/real-data';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';
import { formatVerdict } from '../../local/verifier';
import type { Dialect } from '../../shared/domain/change-record';
import { catchUpAndStop, loadAtSnapshot } from './support/real-data';

const SEED = Number(process.env.SLUICE_E2E_SEED ?? 140_614);

describe.each<[Dialect, 'NEW_ROW_AND_OLD_VALUES' | 'NEW_ROW']>([
  ['GOOGLE_STANDARD_SQL', 'NEW_ROW_AND_OLD_VALUES'],
  ['POSTGRESQL', 'NEW_ROW'],
])('real data, %s, %s', (dialect, capture) => {
  it('replicates every value of every type exactly, through the backfill and the stream', async () => {
    const tables = realDataTables(dialect);
    const stack = await startLocalStack({
      dialect,
      churnMs: 2_000,
      valueCaptureType: capture,
      extraTables: [tables.values, tables.keys],
      functionEnv: { SLUICE_START_AT: 'snapshot' },
    });
    try {
      const workload = new RealDataWorkload(stack.database, dialect, new Random(SEED), tables);
      await workload.prefill(12);
      await loadAtSnapshot(stack);
      stack.startTicking(400);
      for (let i = 0; i < 20; i++) await workload.step();
      if (dialect === 'GOOGLE_STANDARD_SQL') await evolveProtoTypes(stack);
      for (let i = 0; i < 20; i++) await workload.step();
      await catchUpAndStop(stack, workload.lastCommit!);
      const result = await stack.verify(workload.journal);
      if (!result.equal) console.error(`seed ${SEED}\n${formatVerdict(result)}`);
      expect(result.equal).toBe(true);
      expect(result.replicas.find((r) => r.source === tables.keys.name)?.spannerRows).toBeGreaterThan(10);
      // JSON numbers beyond 2^53 arrive exactly (the verifier compares parsed JSON, which would not tell).
      const rows = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, tables.values.replica!);
      const docs = rows.map((r) => String(r[`${dialect === 'POSTGRESQL' ? 'v_json' : 'V_json'}`] ?? ''));
      const big = docs.filter((d) => d.includes('"big"'));
      expect(big.length).toBeGreaterThan(0);
      expect(big.every((d) => d.includes('12345678901234567890') && d.includes('-9223372036854775808'))).toBe(
        true,
      );
      if (dialect === 'GOOGLE_STANDARD_SQL')
        await expectProtoAndEnum(stack, tables.values.replica!, tables.values.history!);
    } finally {
      await stack.stop();
    }
  }, 360_000);
});

/** Schema drift of proto types under a running pipeline: a new message version, and an ENUM column to INT64. */
async function evolveProtoTypes(stack: LocalStack): Promise<void> {
  const [op] = await stack.database.updateSchema({
    statements: [
      `ALTER PROTO BUNDLE UPDATE (${PROTO_MESSAGE})`,
      'ALTER TABLE RealValues ALTER COLUMN A_enum ARRAY<INT64>',
    ],
    protoDescriptors: protoDescriptors(2),
  });
  await op.promise();
}

/** The replica types PROTO as BYTES and ENUM as INT64, and holds the extremes exactly. */
async function expectProtoAndEnum(stack: LocalStack, replica: string, history: string): Promise<void> {
  const [meta] = await stack.emulators.bigquery
    .bigquery()
    .dataset(LOCAL.dataset)
    .table(replica)
    .getMetadata();
  const fields = (meta.schema.fields as Array<{ name: string; type: string; mode?: string }>).filter((f) =>
    /_(proto|enum)$/.test(f.name),
  );
  expect(fields.map((f) => [f.name, f.type, f.mode ?? 'NULLABLE'])).toEqual([
    ['V_proto', 'BYTES', 'NULLABLE'],
    ['V_enum', 'INTEGER', 'NULLABLE'],
    ['A_proto', 'BYTES', 'REPEATED'],
    ['A_enum', 'INTEGER', 'REPEATED'],
  ]);
  const rows = stack.emulators.bigquery.admin.tableRows(LOCAL.dataset, replica);
  const enums = new Set(rows.map((r) => r['V_enum']).filter((v) => v !== null && v !== undefined));
  expect([...enums].every((v) => LEVELS.includes(Number(v)))).toBe(true);
  expect(enums.size).toBeGreaterThan(1);
  expect(rows.some((r) => Buffer.isBuffer(r['V_proto']) && (r['V_proto'] as Buffer).length > 0)).toBe(true);
  // The history keeps the change records' forms: the message in base64, the enum's number as text.
  const changed = stack.emulators.bigquery.admin
    .tableRows(LOCAL.dataset, history)
    .filter((r) => r['mod_type'] !== 'SNAPSHOT' && r['mod_type'] !== 'DELETE')
    .map((r) => JSON.parse(String(r['new_values'])) as Record<string, unknown>);
  const protos = changed.map((v) => v['V_proto']).filter((v) => typeof v === 'string') as string[];
  const numbers = changed.map((v) => v['V_enum']).filter((v) => v !== null && v !== undefined);
  expect(protos.length).toBeGreaterThan(0);
  expect(protos.every((b) => Buffer.from(b, 'base64').toString('base64') === b)).toBe(true);
  expect(numbers.length).toBeGreaterThan(0);
  expect(numbers.every((n) => typeof n === 'string' && LEVELS.includes(Number(n)))).toBe(true);
}
