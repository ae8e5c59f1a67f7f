/**
 * Every SQL block the documentation shows runs on the local stack. Each fenced ```sql block of README.md and
 * docs/*.md is preceded by a marker line saying where it runs:
 *
 * - `<!-- sql: bigquery -->`: a query, run through the official @google-cloud/bigquery client against the
 *   BigQuery emulator after a short replication, and it must return rows. Placeholders: `project.dataset.`
 *   and `shop_cdc.` stand for the local project and dataset (`sluice-local.sluice_demo.`).
 * - `<!-- sql: spanner-ddl googlesql|postgresql -->`: DDL, run through the official @google-cloud/spanner
 *   client on a new database of that dialect on the Spanner emulator, after creating the tables a change
 *   stream's `FOR` clause names (one key column each).
 * - `<!-- sql: production-only: <why> -->`: not run (e.g. INFORMATION_SCHEMA.JOBS); counted and listed.
 *
 * A block without a marker fails the test, so a new block is classified when it is written.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DemoTable } from '../../local/demo-schema';
import { type LocalStack, startLocalStack } from '../../local/stack';
import { LOCAL } from '../../local/stack-config';

const ROOT = join(__dirname, '..', '..');

interface Block {
  where: string;
  marker: string;
  sql: string;
}

/** Every fenced sql block with the marker line before it (empty when there is none). */
function sqlBlocks(): Block[] {
  const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => join('docs', f))];
  return files
    .filter((f) => f.endsWith('.md'))
    .flatMap((file) => {
      const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
      return lines.flatMap((line, i): Block[] => {
        if (line.trim() !== '```sql') return [];
        const end = lines.findIndex((l, j) => j > i && l.trim() === '```');
        const marker = /^<!-- sql: (.+) -->$/.exec(lines[i - 1]?.trim() ?? '')?.[1] ?? '';
        const sql = lines
          .slice(i + 1, end)
          .join('\n')
          .trim();
        return [{ where: `${file}:${i + 1}`, marker, sql }];
      });
    });
}

const blocks = sqlBlocks();

/** A table with a TIMESTAMP key, as docs/types.md queries it. */
const READINGS: DemoTable = {
  name: 'Readings',
  key: ['DeviceId', 'At'],
  columns: [
    { name: 'DeviceId', kind: 'int', nullable: false },
    { name: 'At', kind: 'timestamp', nullable: false },
    { name: 'Reading', kind: 'float', nullable: true },
  ],
  replica: 'readings',
  history: 'readings_history',
};

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack({ churnMs: 0, extraTables: [READINGS] });
  await stack.tick();
  const workload = stack.workload(21);
  workload.start(50);
  await stack.database
    .table('Readings')
    .insert([{ DeviceId: '7', At: '2025-01-01T00:00:00.000000001Z', Reading: 1.5 }]);
  await new Promise((r) => setTimeout(r, 3_000));
  await workload.stop();
  stack.startTicking(500);
  const target = workload.lastCommit ?? null;
  if (target === null) throw new Error('the workload committed nothing');
  expect(await stack.waitForCatchUp(target, 90_000)).toBe(true);
  await stack.stopTicking();
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

it('every sql block of the documentation has a marker saying where it runs', () => {
  expect(blocks.length).toBeGreaterThan(0);
  expect(
    blocks.filter(
      (b) => !/^(bigquery|spanner-ddl (googlesql|postgresql)|production-only: .+)$/.test(b.marker),
    ),
  ).toEqual([]);
  const skipped = blocks.filter((b) => b.marker.startsWith('production-only'));
  console.log(
    `documented SQL: ${blocks.length} blocks, ${skipped.length} production-only${skipped.map((b) => `\n  ${b.where}: ${b.marker}`).join('')}`,
  );
});

const local = (sql: string) =>
  sql
    .replaceAll('project.dataset.', `${LOCAL.projectId}.${LOCAL.dataset}.`)
    .replaceAll('shop_cdc.', `${LOCAL.dataset}.`);

it.each(blocks.filter((b) => b.marker === 'bigquery').map((b) => [b.where, b.sql]))(
  'the BigQuery query of %s runs and returns rows',
  async (_where, sql) => {
    const [rows] = await stack.emulators.bigquery.bigquery().query({ query: local(sql) });
    expect(rows.length).toBeGreaterThan(0);
  },
);

/** The tables a `CREATE CHANGE STREAM … FOR a, b` names. */
function watched(ddl: string): string[] {
  const m = /\bFOR\s+([\w\s,]+?)\s+(OPTIONS|WITH)\b/i.exec(ddl);
  return m ? m[1]!.split(',').map((t) => t.trim()) : [];
}

it.each(
  blocks.filter((b) => b.marker.startsWith('spanner-ddl')).map((b, i) => [b.where, b.marker, b.sql, i]),
)('the Spanner DDL of %s (%s) runs', async (_where, marker, sql, i) => {
  const pg = String(marker).endsWith('postgresql');
  const id = `docs-ddl-${i}`;
  stack.emulators.spanner.admin.createDatabase(
    `projects/${LOCAL.projectId}/instances/${LOCAL.instance}/databases/${id}`,
    pg ? 'POSTGRESQL' : 'GOOGLE_STANDARD_SQL',
  );
  const tables = watched(String(sql)).map((t) =>
    pg ? `CREATE TABLE ${t} (id bigint PRIMARY KEY)` : `CREATE TABLE ${t} (Id INT64) PRIMARY KEY (Id)`,
  );
  const database = stack.spanner.instance(LOCAL.instance).database(id);
  try {
    const [operation] = await database.updateSchema([...tables, String(sql).replace(/;\s*$/, '')]);
    await operation.promise();
  } finally {
    await database.close();
  }
});
