/**
 * Schema and stream drift while the demo workload writes: plans for the end-to-end runner that change the
 * schema (add, widen and drop columns; create a table with a stored generated column and write to it), the
 * stream's capture type, or an option that hides changes, at given workload steps. Each change also updates
 * the demo schema the workload writes by and the verifier compares by, so "BigQuery equals Spanner" covers
 * the new columns and tables.
 */
import type { Database } from '@google-cloud/spanner';
import type { DemoTable } from '../../../local/demo-schema';
import { rowValues } from '../../../local/values';
import type { CommittedMod } from '../../../local/workload';
import type { Dialect } from '../../../shared/domain/change-record';
import { formatTimestamp, fromSecondsAndNanos } from '../../../shared/domain/timestamp';
import type { FaultContext, FaultPlan } from './scenario';

async function ddl(database: Database, statements: string[]): Promise<void> {
  const [op] = await database.updateSchema(statements);
  await op.promise();
}

const n = (dialect: Dialect, name: string) => (dialect === 'POSTGRESQL' ? name.toLowerCase() : name);

/** The new table of the schema plan: created mid-run, with a stored generated column. */
export function labelsTable(dialect: Dialect): { table: DemoTable; ddl: string } {
  const pg = dialect === 'POSTGRESQL';
  const name = n(dialect, 'Labels');
  const table: DemoTable = {
    name,
    key: ['label_id'],
    columns: [
      { name: 'label_id', kind: 'string', nullable: false },
      { name: 'title', kind: 'string', nullable: true },
      { name: 'title_upper', kind: 'string', nullable: true, generated: true },
      { name: 'weight', kind: 'int', nullable: true },
    ],
    replica: name.toLowerCase(),
    history: `${name.toLowerCase()}_history`,
  };
  const text = pg
    ? `CREATE TABLE ${name} (label_id varchar NOT NULL PRIMARY KEY, title varchar,
       title_upper varchar GENERATED ALWAYS AS (upper(title)) STORED, weight bigint)`
    : `CREATE TABLE ${name} (label_id STRING(MAX) NOT NULL, title STRING(MAX),
       title_upper STRING(MAX) AS (UPPER(title)) STORED, weight INT64) PRIMARY KEY (label_id)`;
  return { table, ddl: text };
}

/** Writes a few rows of `table` (inserts, updates, a delete) and journals every mod for the verifier. */
async function writeLabels(ctx: FaultContext, table: DemoTable, round: number): Promise<void> {
  const key = (i: number) => `L-${i}`;
  const writes: Array<{ modType: CommittedMod['modType']; id: string }> = [];
  const [resp] = await ctx.stack.database.runTransactionAsync(async (tx) => {
    writes.length = 0;
    for (let i = round * 3; i < round * 3 + 3; i++) {
      tx.insert(table.name, rowValues(table, { label_id: key(i) }, ctx.rng));
      writes.push({ modType: 'INSERT', id: key(i) });
    }
    if (round > 0) {
      tx.update(table.name, { label_id: key(round * 3 - 3), title: `updated ${round}` });
      writes.push({ modType: 'UPDATE', id: key(round * 3 - 3) });
      tx.deleteRows(table.name, [key(round * 3 - 2)]);
      writes.push({ modType: 'DELETE', id: key(round * 3 - 2) });
    }
    return tx.commit();
  });
  const ts = resp.commitTimestamp as { seconds?: unknown; nanos?: unknown };
  const at = formatTimestamp(fromSecondsAndNanos(String(ts.seconds ?? 0), Number(ts.nanos ?? 0)));
  for (const w of writes)
    ctx.workload.journal.push({
      table: table.name,
      keys: { label_id: w.id },
      modType: w.modType,
      commitTimestamp: at,
    });
}

/**
 * Adds a nullable string column to a demo table in Spanner and in the demo schema (the workload writes it
 * from now on).
 */
async function addStringColumn(
  ctx: FaultContext,
  table: DemoTable,
  name: string,
  pg: boolean,
): Promise<void> {
  await ddl(ctx.stack.database, [
    `ALTER TABLE ${table.name} ADD COLUMN ${name} ${pg ? 'varchar' : 'STRING(MAX)'}`,
  ]);
  table.columns.push({ name, kind: 'string', nullable: true });
  ctx.log.push(`added ${table.name}.${name}`);
}

/** Drops a column in Spanner; the demo schema forgets it (the replica keeps it, NULL from then on). */
async function dropColumn(ctx: FaultContext, table: DemoTable, column: string): Promise<void> {
  await ddl(ctx.stack.database, [`ALTER TABLE ${table.name} DROP COLUMN ${column}`]);
  table.columns = table.columns.filter((c) => c.name !== column);
  ctx.log.push(`dropped ${table.name}.${column}`);
}

/**
 * The schema plan: a column added (and written by the workload), a length widened, a new table with a
 * stored generated column created and written, a column dropped — each while transactions keep committing.
 */
export function schemaChanges(dialect: Dialect): FaultPlan & { labels: DemoTable } {
  const pg = dialect === 'POSTGRESQL';
  const labels = labelsTable(dialect);
  let rounds = 0;
  return {
    labels: labels.table,
    async beforeStep(ctx, step) {
      const { customers, orders } = ctx.stack.schema;
      if (step === 6) await addStringColumn(ctx, customers, 'nickname', pg);
      if (step === 12) {
        await ddl(ctx.stack.database, [
          pg
            ? 'ALTER TABLE orders ALTER COLUMN status TYPE varchar(200)'
            : 'ALTER TABLE Orders ALTER COLUMN status STRING(200) NOT NULL',
        ]);
        ctx.log.push('widened orders.status');
      }
      if (step === 16) {
        await ddl(ctx.stack.database, [labels.ddl]);
        ctx.stack.schema.tables.push(labels.table);
        ctx.log.push(`created ${labels.table.name}`);
      }
      if (step >= 18 && step % 4 === 2) await writeLabels(ctx, labels.table, rounds++);
      if (step === 24) await addStringColumn(ctx, orders, 'note', pg);
      if (step === 30) await dropColumn(ctx, customers, 'email');
    },
  };
}

/** The capture-type plan: the demo stream switches to NEW_VALUES, then OLD_AND_NEW_VALUES, then back. */
export function captureTypeChanges(dialect: Dialect): FaultPlan {
  const set = (ctx: FaultContext, type: string) => {
    const s = ctx.stack.schema.stream;
    const text =
      dialect === 'POSTGRESQL'
        ? `ALTER CHANGE STREAM ${s} SET (value_capture_type = '${type}')`
        : `ALTER CHANGE STREAM ${s} SET OPTIONS (value_capture_type = '${type}')`;
    ctx.log.push(`capture type ${type}`);
    return ddl(ctx.stack.database, [text]);
  };
  return {
    async beforeStep(ctx, step) {
      if (step === 8) await set(ctx, 'NEW_VALUES');
      if (step === 20) await set(ctx, 'OLD_AND_NEW_VALUES');
      if (step === 32) await set(ctx, 'NEW_ROW_AND_OLD_VALUES');
    },
  };
}

/** Sets stream options of the demo stream (`exclude_delete = true`, …). */
export function setStreamOptions(ctx: FaultContext, dialect: Dialect, options: string): Promise<void> {
  const s = ctx.stack.schema.stream;
  const text =
    dialect === 'POSTGRESQL'
      ? `ALTER CHANGE STREAM ${s} SET (${options})`
      : `ALTER CHANGE STREAM ${s} SET OPTIONS (${options})`;
  ctx.log.push(`stream options ${options}`);
  return ddl(ctx.stack.database, [text]);
}
