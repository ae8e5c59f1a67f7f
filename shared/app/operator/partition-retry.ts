/**
 * The operator's retry of failed partitions (`POST /partitions/retry`): each failed partition of the current
 * epoch (or the one named) becomes `ready` again by compare-and-swap, its failure count cleared; the next
 * scheduler tick enqueues it. Its `lastError` stays as the record of what happened until it moves on.
 */
import { SluiceError } from '../../domain/errors';
import { retryFailed } from '../../domain/ledger';
import type { Logger } from '../../domain/log';
import type { LedgerStore } from '../ledger';

/** What a retry request did. */
export interface RetryOutcome {
  epoch: number;
  /** Partitions made ready again. */
  retried: string[];
  /** Named or listed partitions that were not failed (another operator retried them first, …), with state. */
  skipped: Array<{ partition: string; state: string; reason: string }>;
}

/** A partition id as the ledger names it: 32 lowercase hex digits. */
export const PARTITION_ID = /^[0-9a-f]{32}$/;

/**
 * Makes failed partitions ready again. @throws PartitionNotFound when the pipeline has not started or the
 * named partition does not exist.
 */
export async function retryPartitions(
  ledger: LedgerStore,
  log: Logger,
  request: { partition?: string },
): Promise<RetryOutcome> {
  const manifest = await ledger.readManifest();
  if (!manifest)
    throw new PartitionNotFound('the pipeline has not started: there are no partitions to retry');
  const epoch = manifest.value.epoch;
  const ids = request.partition
    ? [request.partition]
    : (await ledger.listPartitions()).partitions
        .filter((p) => p.view.epoch === epoch && p.view.state === 'failed')
        .map((p) => p.view.id);
  const outcome: RetryOutcome = { epoch, retried: [], skipped: [] };
  for (const id of ids) {
    const out = await ledger.updatePartition(epoch, id, (entry, writer) => retryFailed(entry, writer));
    if (out.kind === 'missing') {
      if (request.partition) throw new PartitionNotFound(`no partition ${id} in epoch ${epoch}`);
      continue;
    }
    if (out.kind === 'written') {
      outcome.retried.push(id);
      log.notice('partition.retried', {
        partition: id,
        lastError: out.entry.lastError?.message ?? null,
      });
    } else {
      const reason = out.kind === 'refused' ? out.message : 'unchanged';
      outcome.skipped.push({ partition: id, state: out.entry.state, reason });
    }
  }
  return outcome;
}

/** The partition named does not exist (answered 404). */
export class PartitionNotFound extends SluiceError {
  override readonly name = 'PartitionNotFound';
  constructor(message: string) {
    super('invalid-input', message);
  }
}
