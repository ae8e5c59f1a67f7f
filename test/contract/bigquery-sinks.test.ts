/**
 * The sink contract against BigQuery (the local emulator through the official clients), plus what only the
 * real clients produce: table metadata, value round trips, append failures and dropped connections.
 */
process.env.METADATA_SERVER_DETECTION = 'none';
delete process.env.BIGQUERY_EMULATOR_HOST;

import type { TableField } from '@google-cloud/bigquery';
import { BigQueryCompletenessSink } from '../../shared/adapters/bigquery/completeness-sink';
import { BigQueryHistorySink } from '../../shared/adapters/bigquery/history-sink';
import { BigQueryReplicaSink } from '../../shared/adapters/bigquery/replica-sink';
import { type BigQueryEmulator, startBigQueryEmulator } from '../emulators/bigquery/emulator';
import { type SinkHarness, sinkContract, type TextRow } from './sinks.contract';

const PROJECT = 'test-project';
let emu: BigQueryEmulator;
let datasets = 0;

beforeAll(async () => {
  emu = await startBigQueryEmulator({ grpcPort: 0, restPort: 0, projectId: PROJECT });
});

afterAll(async () => {
  await emu?.stop();
});

/** A cell as text: client objects (timestamps, dates, Big) by their value, BYTES as base64. */
export function cellText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (typeof v === 'object' && 'value' in v) return String((v as { value: unknown }).value);
  return String(v);
}

/** A fresh dataset and sinks on it. */
export async function bigQueryHarness(opts: { maxStaleness?: string } = {}) {
  const dataset = `ds_${++datasets}`;
  const bigquery = emu.bigquery();
  await bigquery.createDataset(dataset);
  const clients = { bigquery, writer: emu.writerClient() };
  const ref = { projectId: PROJECT, dataset };
  const replica = new BigQueryReplicaSink(clients, { ...ref, ...opts });
  const history = new BigQueryHistorySink(clients, ref);
  const completeness = new BigQueryCompletenessSink(clients, ref);
  const rows = async (table: string) =>
    (await bigquery.dataset(dataset).table(table).getRows())[0] as Record<string, unknown>[];
  const harness: SinkHarness = {
    replica,
    history,
    completeness,
    replicaRows: async (d) =>
      (await rows(d)).map(
        (r): TextRow => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, cellText(v)])),
      ),
    replicaTable: async (d) => {
      const t = bigquery.dataset(dataset).table(d);
      if (!(await t.exists())[0]) return undefined;
      const [m] = await t.getMetadata();
      return {
        fields: (m.schema.fields as TableField[]).map((f) => f.name ?? ''),
        primaryKey: m.tableConstraints?.primaryKey?.columns ?? [],
      };
    },
    historyChangeIds: async (d) => (await rows(d)).map((r) => String(r.change_id)),
    completenessRows: async () =>
      (await rows('_sluice_completeness')).map((r) => ({
        source_table: String(r.source_table),
        destination: String(r.destination),
        watermark_ns: String(r.watermark_ns),
      })),
    close: async () => {
      replica.close();
      history.close();
      completeness.close();
    },
  };
  return { harness, replica, history, completeness, bigquery, dataset };
}

sinkContract('BigQuery emulator', async () => (await bigQueryHarness()).harness);
