/**
 * The writer's ports against both backends: in memory, and the Spanner emulator through the official client
 * in both dialects (SpannerWriterCatalog reading INFORMATION_SCHEMA, SpannerMutationSink over
 * batchWriteAtLeastOnce).
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { createTestDatabase, type TestDatabase } from '../../local/emulators/spanner/client';
import { type RunningSpannerEmulator, startSpannerEmulator } from '../../local/emulators/spanner/server';
import { MemoryMutationSink } from '../../shared/adapters/memory/mutation-sink';
import { MemoryWriterCatalog } from '../../shared/adapters/memory/writer-catalog';
import { SpannerMutationSink } from '../../shared/adapters/spanner/mutation-sink';
import { SpannerWriterCatalog } from '../../shared/adapters/spanner/writer-catalog';
import type { WriterCatalog } from '../../shared/domain/writer/catalog';
import { mutationSinkContract } from './mutation-sink.contract';

const memoryCatalog = (): WriterCatalog => ({
  dialect: 'GOOGLE_STANDARD_SQL',
  tables: [
    {
      name: 'Accounts',
      primaryKey: ['Id'],
      indexes: 1,
      columns: [
        {
          name: 'Id',
          type: { code: 'INT64' },
          typeName: 'INT64',
          nullable: false,
          generated: false,
          indexes: 0,
        },
        {
          name: 'Name',
          type: { code: 'STRING' },
          typeName: 'STRING(MAX)',
          nullable: false,
          generated: false,
          indexes: 1,
        },
        {
          name: 'Balance',
          type: { code: 'FLOAT64' },
          typeName: 'FLOAT64',
          nullable: true,
          generated: false,
          indexes: 0,
        },
      ],
    },
  ],
});

mutationSinkContract('in-memory', async () => {
  const catalog = memoryCatalog();
  return {
    sink: new MemoryMutationSink(catalog),
    catalog: new MemoryWriterCatalog(catalog),
    table: 'Accounts',
    columns: { id: 'Id', name: 'Name', balance: 'Balance' },
  };
});

let emu: RunningSpannerEmulator;
const open: TestDatabase[] = [];

beforeAll(async () => {
  emu = await startSpannerEmulator({ port: 0, changeStreams: false });
});

afterAll(async () => {
  for (const t of open) await t.close();
  await emu?.stop();
});

/** The Accounts table of each dialect, with an index on its name. */
const ACCOUNTS = {
  GOOGLE_STANDARD_SQL: {
    label: 'GoogleSQL',
    ddl: [
      'CREATE TABLE Accounts (Id INT64 NOT NULL, Name STRING(MAX) NOT NULL, Balance FLOAT64) PRIMARY KEY (Id)',
      'CREATE INDEX AccountsByName ON Accounts (Name)',
    ],
    table: 'Accounts',
    columns: { id: 'Id', name: 'Name', balance: 'Balance' },
  },
  POSTGRESQL: {
    label: 'PostgreSQL',
    ddl: [
      'CREATE TABLE accounts (id bigint NOT NULL PRIMARY KEY, name text NOT NULL, balance float8)',
      'CREATE INDEX accounts_by_name ON accounts (name)',
    ],
    table: 'accounts',
    columns: { id: 'id', name: 'name', balance: 'balance' },
  },
} as const;

for (const [dialect, { label, ddl, table, columns }] of Object.entries(ACCOUNTS)) {
  mutationSinkContract(`Spanner emulator, ${label}`, async () => {
    const t = await createTestDatabase(emu, dialect as keyof typeof ACCOUNTS, [...ddl]);
    open.push(t);
    return {
      sink: new SpannerMutationSink(t.database),
      catalog: new SpannerWriterCatalog(t.database),
      table,
      columns,
    };
  });
}
