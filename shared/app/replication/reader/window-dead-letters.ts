/**
 * The records of a window the replica could not take, set aside under `SLUICE_ON_BAD_RECORD=dead-letter`
 * (ADR-1502): one letter per record, named by the record's identity (ADR-1512), so a re-read that splits
 * its flushes differently finds the same letters; each logged `record.dead-lettered` with its table, column,
 * key and reason.
 */
import { type RejectedRecord, rejectionReason } from '../../../domain/bad-records';
import { newDeadLetter } from '../../../domain/dead-letter';
import type { PartitionEntry } from '../../../domain/ledger';
import type { Timestamp } from '../../../domain/timestamp';
import { logDeadLettered } from '../../ledger';
import type { WindowContext } from './window-context';

/**
 * Writes each rejected record to the dead letters before the boundary can move past it (`position`: the
 * boundary acknowledged so far); returns how many letters were put (one already written by an earlier attempt
 * counts, and says so in its log line).
 */
export async function setAside(
  ctx: Pick<WindowContext, 'config' | 'runtime' | 'deadLetters'>,
  entry: PartitionEntry,
  position: Timestamp,
  rejected: RejectedRecord[],
): Promise<number> {
  for (const r of rejected) {
    const letter = newDeadLetter({
      pipeline: ctx.config.pipeline,
      partition: { id: entry.id, epoch: entry.epoch },
      position,
      now: ctx.runtime.now(),
      rejected: [r],
      reason: rejectionReason(r.error),
    });
    const out = await ctx.deadLetters.put(letter);
    logDeadLettered(ctx.runtime.log, letter, r, out);
  }
  return rejected.length;
}
