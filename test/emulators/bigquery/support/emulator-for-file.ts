/**
 * One BigQuery emulator for a test file, started before its tests and stopped after them, with a fresh
 * dataset per test, so that each file states only what it tests.
 */
import type { BigQuery } from '@google-cloud/bigquery';
import type { managedwriter } from '@google-cloud/bigquery-storage';
import { type BigQueryEmulator, startBigQueryEmulator } from '../../../../local/emulators/bigquery/emulator';
import {
  BigQueryHistorySink,
  type HistorySinkOptions,
} from '../../../../shared/adapters/bigquery/history-sink';

/** A new dataset and the official clients to reach it. */
export interface FreshDataset {
  dataset: string;
  bigquery: BigQuery;
  clients: { bigquery: BigQuery; writer: managedwriter.WriterClient };
}

/** The file's emulator (read inside tests) and a maker of datasets. */
export interface EmulatorForFile {
  readonly emu: BigQueryEmulator;
  /** Creates dataset `<prefix>_<n>`, n counting up within the file. */
  freshDataset(prefix: string): Promise<FreshDataset>;
  /** A fresh dataset (as {@link freshDataset}) and a BigQuery history sink writing to it. */
  freshHistory(
    prefix: string,
    options?: Omit<HistorySinkOptions, 'projectId' | 'dataset'>,
  ): Promise<FreshDataset & { history: BigQueryHistorySink }>;
}

/** Registers `beforeAll` / `afterAll` hooks that start and stop an emulator for `projectId`. */
export function bigQueryEmulatorForFile(projectId = 'test-project'): EmulatorForFile {
  let emu: BigQueryEmulator | undefined;
  let datasets = 0;
  beforeAll(async () => {
    emu = await startBigQueryEmulator({ grpcPort: 0, restPort: 0, projectId });
  });
  afterAll(async () => {
    await emu?.stop();
  });
  const running = (): BigQueryEmulator => {
    if (!emu) throw new Error('the BigQuery emulator is not ready: read it inside a test');
    return emu;
  };
  return {
    get emu() {
      return running();
    },
    async freshDataset(prefix) {
      const dataset = `${prefix}_${++datasets}`;
      const bigquery = running().bigquery();
      await bigquery.createDataset(dataset);
      return { dataset, bigquery, clients: { bigquery, writer: running().writerClient() } };
    },
    async freshHistory(prefix, options = {}) {
      const fresh = await this.freshDataset(prefix);
      const history = new BigQueryHistorySink(fresh.clients, {
        ...options,
        projectId,
        dataset: fresh.dataset,
      });
      return { ...fresh, history };
    },
  };
}
