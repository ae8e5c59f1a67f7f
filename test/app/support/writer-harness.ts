/**
 * The writer use case over in-memory ports: a writer wired to an in-memory sink, catalog and dead-letter
 * store, with a clock its sleeps move forward, and the mutations the writer tests send.
 */
import { MemoryMutationSink } from '../../../shared/adapters/memory/mutation-sink';
import { MemoryObjectStore } from '../../../shared/adapters/memory/object-store';
import { MemoryWriterCatalog } from '../../../shared/adapters/memory/writer-catalog';
import { MutationWriter } from '../../../shared/app/writer/writer';
import { createLogger } from '../../../shared/domain/log';
import type { WriterCatalog, WriterColumn } from '../../../shared/domain/writer/catalog';
import { parseWriterConfig, type WriterConfig } from '../../../shared/domain/writer/config';
import type { ObjectStore } from '../../../shared/ports/object-store';

export const col = (name: string, code: string, nullable = true, indexes = 0): WriterColumn => ({
  name,
  type: { code },
  typeName: code,
  nullable,
  generated: false,
  indexes,
});

export function catalog(): WriterCatalog {
  return {
    dialect: 'GOOGLE_STANDARD_SQL',
    tables: [
      {
        name: 'Accounts',
        columns: [col('Id', 'INT64', false), col('Name', 'STRING', false), col('Balance', 'FLOAT64')],
        primaryKey: ['Id'],
        indexes: 0,
      },
      {
        name: 'Wide',
        columns: [
          col('Id', 'INT64', false),
          col('A', 'STRING', true, 1),
          col('B', 'STRING', true, 1),
          col('C', 'STRING', true, 1),
        ],
        primaryKey: ['Id'],
        indexes: 3,
      },
    ],
  };
}

export interface Harness {
  writer: MutationWriter;
  sink: MemoryMutationSink;
  source: MemoryWriterCatalog;
  store: MemoryObjectStore;
  sleeps: number[];
  lines: Array<Record<string, unknown>>;
  clock: { now: number };
}

export function harness(env: Record<string, string> = {}, store?: ObjectStore): Harness {
  const config: WriterConfig = parseWriterConfig({
    SLUICE_PROJECT: 'acme-prod',
    SLUICE_SPANNER_INSTANCE: 'main',
    SLUICE_SPANNER_DATABASE: 'orders',
    SLUICE_LEDGER_BUCKET: 'acme-ledger',
    ...env,
  });
  const sink = new MemoryMutationSink(catalog());
  const source = new MemoryWriterCatalog(catalog());
  const memory = new MemoryObjectStore();
  const sleeps: number[] = [];
  const lines: Array<Record<string, unknown>> = [];
  const clock = { now: 1_700_000_000_000 };
  let id = 0;
  const writer = new MutationWriter({
    config,
    sink,
    catalog: source,
    deadLetters: store ?? memory,
    log: createLogger((l) => lines.push(JSON.parse(l))),
    nowMs: () => clock.now,
    sleep: async (ms) => {
      sleeps.push(ms);
      clock.now += ms;
    },
    random: () => 1,
    newId: () => `req${++id}`,
  });
  return { writer, sink, source, store: memory, sleeps, lines, clock };
}

export const upsert = (id: number, name = `n${id}`) => ({
  op: 'insertOrUpdate',
  table: 'Accounts',
  row: { Id: id, Name: name },
});
export const insert = (id: number, name = `n${id}`) => ({
  op: 'insert',
  table: 'Accounts',
  row: { Id: String(id), Name: name },
});
export const body = (...mutations: unknown[]) => ({ mutations });
export const names = (h: Harness) =>
  [...h.sink.rowsOf('Accounts').values()].sort((a, b) => Number(a.Id) - Number(b.Id)).map((r) => r.Name);
