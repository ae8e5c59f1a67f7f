/**
 * Scheduler tick over a large ledger: the GCS emulator's store is filled directly with N partition objects
 * (metadata mirrored as the ledger writes it), then the real `Scheduler` ticks through the official Storage
 * client. Measured: tick wall time and the JSON API calls the emulator saw (`objects.list` and every other).
 * The emulator runs in this process, so its listing work is inside the measured time (pessimistic).
 */

import { Storage } from '@google-cloud/storage';
import { FaultInjector } from '../../local/emulators/common/faults';
import { startGcsHttp } from '../../local/emulators/gcs/server';
import { GcsStore } from '../../local/emulators/gcs/store';
import { GcsObjectStore } from '../../shared/adapters/gcs/object-store';
import { MemoryChangeSource } from '../../shared/adapters/memory/change-source';
import {
  MemoryCompletenessSink,
  MemoryHistorySink,
  MemoryReplicaSink,
} from '../../shared/adapters/memory/sinks';
import { MemoryTaskQueue } from '../../shared/adapters/memory/task-queue';
import type { AppSettings } from '../../shared/app/common/settings';
import { LedgerStore } from '../../shared/app/ledger/ledger-store';
import { Scheduler } from '../../shared/app/replication/scheduler/scheduler';
import { parseConfigObject } from '../../shared/domain/config';
import type { TableSchema } from '../../shared/domain/information-schema';
import {
  entriesFromChildPartitions,
  ledgerPaths,
  type PartitionEntry,
  serializeEntry,
  serializeManifest,
  toMetadata,
} from '../../shared/domain/ledger';
import { createLogger } from '../../shared/domain/log';
import { addMillis, formatTimestamp, fromEpochMillis, type Timestamp } from '../../shared/domain/timestamp';
import type { SpannerCatalog } from '../../shared/ports/spanner-catalog';
import { AllTablesCatalog } from '../app/support/catalog';

const BUCKET = 'bench-ledger';
const PIPELINE = 'bench';

/** Counts every JSON API call by method, on its way through the fault hook every request passes. */
class CountingFaults extends FaultInjector {
  readonly calls = new Map<string, number>();
  override take(method: string) {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    return super.take(method);
  }
}

/** A catalog of one watched table, answered from memory (the scheduler validates the stream once). */
class StaticCatalog extends AllTablesCatalog implements SpannerCatalog {
  async tableSchema(table: string): Promise<TableSchema> {
    return {
      name: table,
      primaryKey: ['Id'],
      columns: [{ name: 'Id', type: { code: 'INT64' }, nullable: false, ordinalPosition: 1 }],
    };
  }
  async tableSchemas(): Promise<TableSchema[]> {
    return [await this.tableSchema('Orders')];
  }
  async readRowsAt() {
    return { columns: [], rows: [] };
  }
}

/**
 * N entries of a pipeline in steady state: 1 in 10 ready (the tick enqueues it), the rest leased by a reader
 * whose lease has not expired (the tick leaves them alone).
 */
function entries(n: number, start: Timestamp, now: Timestamp): PartitionEntry[] {
  const record = {
    kind: 'child-partitions' as const,
    startTimestamp: start,
    recordSequence: '00000000',
    childPartitions: Array.from({ length: n }, (_, i) => ({
      token: `token-${i}`,
      parentPartitionTokens: [],
    })),
  };
  return entriesFromChildPartitions(record, 0).map((e, i) =>
    i % 10 === 0
      ? { ...e, position: addMillis(now, -2_000) }
      : {
          ...e,
          state: 'leased',
          position: addMillis(now, -1_000),
          lease: { holder: `reader-${i}`, expiresAt: addMillis(now, 600_000) },
        },
  );
}

function fill(store: GcsStore, n: number, start: Timestamp, now: Timestamp): void {
  const paths = ledgerPaths(PIPELINE);
  const manifest = {
    format: 1 as const,
    pipeline: PIPELINE,
    stream: 'Changes',
    dialect: 'GOOGLE_STANDARD_SQL' as const,
    start,
    epoch: 0,
    state: 'running' as const,
    reason: null,
    writer: 'bench',
  };
  const json = 'application/json';
  store.insertObject(
    BUCKET,
    paths.manifest,
    Buffer.from(serializeManifest(manifest)),
    { contentType: json },
    {},
  );
  for (const e of entries(n, start, now)) {
    const data = Buffer.from(serializeEntry(e));
    store.insertObject(
      BUCKET,
      paths.partition(0, e.id),
      data,
      { contentType: json, metadata: toMetadata(e) },
      {},
    );
  }
}

/** One measured tick. */
export interface TickRun {
  partitions: number;
  ms: number;
  listCalls: number;
  otherCalls: number;
  enqueued: number;
}

function settings(start: Timestamp): AppSettings {
  const config = parseConfigObject({
    project: 'sluice-bench',
    spanner: { instance: 'bench', database: 'bench', stream: 'Changes' },
    bigquery: { dataset: 'bench' },
    ledger: { bucket: BUCKET },
    tables: { Items: { replica: 'items' } },
    startAt: formatTimestamp(start),
  });
  return { config, readerUrl: 'http://127.0.0.1:1/reader', retentionMarginMs: 3_600_000, idleDelayMs: 5_000 };
}

/** Fills a fresh ledger with `partitions` entries and measures `ticks` ticks after one warm-up tick. */
export async function schedulerTicks(partitions: number, ticks: number): Promise<TickRun[]> {
  const store = new GcsStore();
  store.createBucket(BUCKET);
  const faults = new CountingFaults();
  const http = await startGcsHttp(store, faults, 0);
  const now = fromEpochMillis(Date.now());
  const start = addMillis(now, -3_600_000);
  fill(store, partitions, start, now);
  const storage = new Storage({ projectId: 'sluice-bench', apiEndpoint: http.url });
  const log = createLogger(() => undefined, {}, 'ERROR');
  const ledger = new LedgerStore(new GcsObjectStore(storage.bucket(BUCKET)), PIPELINE, log);
  const ports = {
    ledger,
    catalog: new StaticCatalog(),
    source: new MemoryChangeSource(),
    queue: new MemoryTaskQueue(),
    completeness: new MemoryCompletenessSink(),
    replica: new MemoryReplicaSink(),
    history: new MemoryHistorySink(),
  };
  const scheduler = new Scheduler(ports, settings(start), { now: () => fromEpochMillis(Date.now()), log });
  const runs: TickRun[] = [];
  try {
    for (let i = 0; i <= ticks; i++) {
      faults.calls.clear();
      const t = performance.now();
      const report = await scheduler.tick();
      const ms = performance.now() - t;
      const listCalls = faults.calls.get('objects.list') ?? 0;
      const all = [...faults.calls.values()].reduce((a, b) => a + b, 0);
      if (i > 0)
        runs.push({ partitions, ms, listCalls, otherCalls: all - listCalls, enqueued: report.enqueued });
    }
  } finally {
    await http.stop();
  }
  return runs;
}
