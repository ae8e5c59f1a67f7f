/** What the backfill use cases need, as ports (no Google client here). */

import type { PipelineConfig } from '../../domain/config';
import type { SealSettings } from '../../domain/dead-letter-seal';
import type { Logger } from '../../domain/log';
import type { Timestamp } from '../../domain/timestamp';
import type { ObjectStore } from '../../ports/object-store';
import type { HistorySink, ReplicaSink } from '../../ports/sinks';
import type { SnapshotSource } from '../../ports/snapshot-source';
import type { SpannerCatalog } from '../../ports/spanner-catalog';
import type { TaskQueue } from '../../ports/task-queue';
import type { Enrichments } from '../enrichment';
import type { BackfillLineage } from '../lineage';
import type { TableRegistry } from '../tables';

/** Dependencies of every backfill use case. */
export interface BackfillDeps {
  config: Pick<
    PipelineConfig,
    'pipeline' | 'tables' | 'allTables' | 'excludedTables' | 'spanner' | 'onBadRecord'
  >;
  /** The ledger bucket. */
  store: ObjectStore;
  queue: TaskQueue;
  snapshots: SnapshotSource;
  catalog: Pick<SpannerCatalog, 'dialect' | 'streamScope' | 'tableSchema' | 'tableSchemas'>;
  /**
   * What replaying stream dead letters needs besides the replica (ADR-1503): the full catalog (rows read at
   * a commit timestamp), a table registry and the seal settings letters are checked with (ADR-2305).
   * Absent: `POST /dead-letters/replay` answers 503.
   */
  replay?: { catalog: SpannerCatalog; tables: TableRegistry; seal: SealSettings } | undefined;
  /** Key the backfill seals its own dead letters with, as the reader does (ADR-2305); absent: unsigned. */
  deadLetterKey?: Buffer;
  replica: ReplicaSink;
  history: HistorySink;
  /** URL of the worker route (`…/backfills/tasks`) that Cloud Tasks calls. */
  workerUrl: string;
  /** Wall clock as a nanosecond timestamp. */
  now: () => Timestamp;
  /** A fresh job id (`[A-Za-z0-9_-]`); random in production, scripted in tests. */
  newId: () => string;
  log: Logger;
  /** Data Boost when a request does not say (`SLUICE_DATA_BOOST`). */
  dataBoostDefault?: boolean;
  /** Rows per sink write (default 500). */
  batchRows?: number;
  /** Approximate bytes of values per sink write (default 16 MiB): large cells make smaller batches. */
  batchBytes?: number;
  /** Applies the tables' lookups at the snapshot timestamp; absent: a table with lookups fails loudly. */
  enrichments?: Enrichments | undefined;
  /** The writer's dead-letter prefix when not its default (`SLUICE_WRITER_DEAD_LETTER_PREFIX`, ADR-2203). */
  writerDeadLetterPrefix?: string | undefined;
  /** Run events of each job (START, COMPLETE, FAIL, ABORT); none when absent. */
  lineage?: BackfillLineage | undefined;
}
