/**
 * Starting the ledger: the first run, a start interrupted by a crash, and a restart at now after the stream's
 * retention expired (new epoch). Only the writer that wins the manifest's compare-and-swap runs the initial
 * query and records the first partitions; a start found half done is moved to a fresh epoch, because a second
 * initial query may return other tokens than the first.
 *
 * `startAt: "snapshot"` and the retention fallback `restart-and-backfill` first start (or find, by a
 * deterministic id) a backfill of every replica table at T, then start the ledger at T + 1 ns: every change
 * at or before T is in the snapshot, every later one in the stream. The backfill comes first so a crash
 * between the two steps is repaired by the next tick finding the same job, hence the same T.
 */

import type { JobOrigin } from '../../../domain/backfill/job';
import type { Dialect } from '../../../domain/change-record';
import type { PipelineConfig } from '../../../domain/config';
import { SluiceError } from '../../../domain/errors';
import {
  entriesFromChildPartitions,
  MANIFEST_FORMAT,
  type Manifest,
  nextEpoch,
} from '../../../domain/ledger';
import { addNanos, formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { ChangeSource } from '../../../ports/change-source';
import { type BackfillStarter, replicaTables } from '../../backfill';
import type { Runtime } from '../../common';
import { type LedgerStore, newWriterToken, type Versioned } from '../../ledger';

/** The arguments of {@link startPipeline}. */
export interface StartArgs {
  ledger: LedgerStore;
  source: ChangeSource;
  config: PipelineConfig;
  dialect: Dialect;
  runtime: Runtime;
  /** Needed by `startAt: "snapshot"` and `restart-and-backfill` only. */
  backfills?: BackfillStarter | undefined;
  /** The tables the stream watches now (what the all-tables rule of `SLUICE_TABLES` covers). */
  watchedTables?: readonly string[];
}

/** Id of the backfill of a new pipeline (`startAt: "snapshot"`). */
export const START_BACKFILL_ID = 'start-at-snapshot';

/** Id of the backfill that repairs the gap before epoch `epoch` (retention fallback). */
export function retentionBackfillId(epoch: number): string {
  return `retention-epoch-${epoch}`;
}

/**
 * Backfills every replica table at T (or finds the backfill of this id) and returns T + 1 ns, where the
 * stream must start. With no replica table there is nothing to load: the stream starts at now.
 */
export async function snapshotHandOver(args: StartArgs, id: string, origin: JobOrigin): Promise<Timestamp> {
  const tables = replicaTables(args.config, args.watchedTables ?? []);
  if (tables.length === 0) return args.runtime.now();
  if (!args.backfills) {
    throw new SluiceError(
      'permanent',
      `${origin} needs the backfill function: set SLUICE_BACKFILL_QUEUE and SLUICE_BACKFILL_URL on the scheduler`,
    );
  }
  const started = await args.backfills.start({ tables, targets: ['replica'] }, { id, origin });
  if (!started.ok) {
    throw new SluiceError(
      'permanent',
      `cannot backfill ${tables.join(', ')}: ${started.problems.join('; ')}`,
    );
  }
  const at = started.value.snapshot.readTimestamp;
  args.runtime.log.notice('pipeline.snapshot-hand-over', {
    backfill: id,
    origin,
    snapshotTimestamp: formatTimestamp(at),
    streamStart: formatTimestamp(addNanos(at, 1n)),
    tables,
  });
  return addNanos(at, 1n);
}

/** Where a new pipeline starts reading: a given commit timestamp, now, or just after a snapshot. */
export async function startTimestamp(args: StartArgs): Promise<Timestamp> {
  const { startAt } = args.config;
  if (startAt.kind === 'timestamp') return startAt.at;
  if (startAt.kind === 'snapshot') return snapshotHandOver(args, START_BACKFILL_ID, 'start-at-snapshot');
  return args.runtime.now();
}

/** Runs the initial query (null token) at the epoch's start and records its partitions (create-only). */
async function recordInitialPartitions(
  ledger: LedgerStore,
  source: ChangeSource,
  manifest: Manifest,
  heartbeatMs: number,
): Promise<number> {
  let created = 0;
  const query = { partitionToken: null, from: manifest.start, to: null, heartbeatMs };
  for await (const record of source.read(query)) {
    if (record.kind !== 'child-partitions') continue;
    for (const entry of entriesFromChildPartitions(record, manifest.epoch)) {
      await ledger.createPartition(entry);
      created++;
    }
  }
  return created;
}

/**
 * Brings the manifest to `running` and returns it, or undefined when another tick is doing so (or won a race).
 * `base` is the current manifest, if any; `restartAt` forces a new epoch starting there.
 */
export async function startPipeline(
  args: StartArgs,
  base: Versioned<Manifest> | undefined,
  restartAt?: Timestamp,
): Promise<Versioned<Manifest> | undefined> {
  const { ledger, source, config, runtime } = args;
  const writer = newWriterToken('scheduler');
  let next: Manifest;
  if (!base) {
    next = {
      format: MANIFEST_FORMAT,
      pipeline: config.pipeline,
      stream: config.spanner.stream,
      dialect: args.dialect,
      start: await startTimestamp(args),
      epoch: 0,
      state: 'starting',
      reason: null,
      writer,
    };
  } else {
    next = nextEpoch(base.value, restartAt ?? base.value.start, writer);
  }
  let generation = await ledger.writeManifest(next, base?.generation ?? 0);
  if (!generation) return undefined;
  const created = await recordInitialPartitions(ledger, source, next, config.heartbeatMs);
  const running: Manifest = { ...next, state: 'running', writer: newWriterToken('scheduler') };
  generation = await ledger.writeManifest(running, generation);
  if (!generation) return undefined;
  runtime.log.notice('pipeline.started', {
    epoch: running.epoch,
    start: formatTimestamp(running.start),
    partitions: created,
  });
  return { value: running, generation };
}
