/**
 * What the scheduler's status says about failures (ADR-1501, ADR-1503, ADR-1507): the recorded errors of
 * failed and still-failing partitions, the stream dead letters' counts, and the `stopped` status of a
 * configuration the database cannot serve.
 */
import type { PipelineConfig } from '../../../domain/config';
import type { SluiceError } from '../../../domain/errors';
import type { Runtime } from '../../common';
import type { EnrichmentCounters, EnrichmentTotals } from '../../enrichment';
import type { DeadLetterCounts, DeadLetterStore, LedgerStore, ListedPartition } from '../../ledger';
import { type PipelineStatus, partitionError, type StatusError, stoppedStatus } from '../../ledger';

/**
 * The recorded errors of failed partitions, then of partitions that keep failing (retried, `failures` > 0):
 * a few reads, at most ten — such partitions are rare and need an operator.
 */
export async function partitionErrors(
  ledger: LedgerStore,
  current: ListedPartition[],
  epoch: number,
): Promise<StatusError[]> {
  const rank = (state: string) => (state === 'failed' ? 0 : 1);
  const failing = current
    .map((p) => p.view)
    .filter((v) => v.state === 'failed' || v.failures > 0)
    .sort((a, b) => rank(a.state) - rank(b.state) || b.failures - a.failures);
  const out: StatusError[] = [];
  for (const view of failing.slice(0, 10)) {
    const e = await ledger.readPartition(epoch, view.id).catch(() => undefined);
    const last = e?.value.lastError;
    if (last) out.push(partitionError(view, last));
  }
  return out;
}

/** The dead letters' counts for the status; a listing that fails is handed to `onError`, not thrown. */
export async function countDeadLetters(
  deadLetters: DeadLetterStore | undefined,
  onError: (err: unknown) => void,
): Promise<{ calls: number; counts: DeadLetterCounts } | undefined> {
  if (!deadLetters) return undefined;
  try {
    const { calls, ...counts } = await deadLetters.counts();
    return { calls, counts };
  } catch (err) {
    onError(err);
    return undefined;
  }
}

/**
 * The lookups' counters summed over the reader instances, when a table has lookups; a listing that fails
 * is handed to `onError`, not thrown.
 */
export async function countEnrichment(
  counters: EnrichmentCounters | undefined,
  config: Pick<PipelineConfig, 'tables'>,
  onError: (err: unknown) => void,
): Promise<(EnrichmentTotals & { calls: number; folded: number }) | undefined> {
  if (!counters || !Object.values(config.tables).some((t) => (t.lookups ?? []).length > 0)) return undefined;
  try {
    return await counters.totals();
  } catch (err) {
    onError(err);
    return undefined;
  }
}

/**
 * Writes the `stopped` status of a configuration the database cannot serve, with the reason naming the
 * table and the fix, and logs `pipeline.failed`; the manifest is left alone, so the tick after the fix runs.
 */
export async function writeStoppedStatus(
  ledger: LedgerStore,
  config: Pick<PipelineConfig, 'pipeline' | 'spanner'>,
  runtime: Runtime,
  e: SluiceError,
): Promise<PipelineStatus> {
  const manifest = await ledger.readManifest();
  runtime.log.error('pipeline.failed', e, { reason: 'configuration' });
  const status = stoppedStatus({
    pipeline: config.pipeline,
    stream: config.spanner.stream,
    reason: e.message,
    now: runtime.now(),
    epoch: manifest?.value.epoch ?? null,
  });
  await ledger.writeStatus(status);
  return status;
}
