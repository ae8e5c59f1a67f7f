/**
 * Starting the ledger: the first run, a start interrupted by a crash, and a restart at now after the stream's
 * retention expired (new epoch). Only the writer that wins the manifest's compare-and-swap runs the initial
 * query and records the first partitions; a start found half done is moved to a fresh epoch, because a second
 * initial query may return other tokens than the first.
 */

import type { Dialect } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import { entriesFromChildPartitions, MANIFEST_FORMAT, type Manifest, nextEpoch } from '../domain/ledger';
import { formatTimestamp, type Timestamp } from '../domain/timestamp';
import type { ChangeSource } from '../ports/change-source';
import { type LedgerStore, newWriterToken, type Versioned } from './ledger-store';
import type { Runtime } from './settings';

/** Where a new pipeline starts reading. `snapshot` starts the stream at now; the backfill covers the past. */
export function startTimestamp(config: PipelineConfig, now: Timestamp): Timestamp {
  return config.startAt.kind === 'timestamp' ? config.startAt.at : now;
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
  args: {
    ledger: LedgerStore;
    source: ChangeSource;
    config: PipelineConfig;
    dialect: Dialect;
    runtime: Runtime;
  },
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
      start: startTimestamp(config, runtime.now()),
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
