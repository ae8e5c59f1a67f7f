/** The Cloud Tasks queues: the reader windows' (one, or several shards), and one for backfill partitions. */
import * as gcp from '@pulumi/gcp';
import { type InfraSettings, readerQueueIds } from '../settings';
import type { QueueSettings } from '../sizing';

/** The queues. */
export interface Queues {
  /** The first is the one-queue deployment's queue, under the same logical name. */
  reader: gcp.cloudtasks.Queue[];
  backfill: gcp.cloudtasks.Queue;
}

/** Creates the queues with the rates and retries derived in `sizing.ts`. */
export function createQueues(s: InfraSettings): Queues {
  return {
    reader: readerQueueIds(s).map((id, i) =>
      queue(i === 0 ? 'reader-queue' : `reader-queue-${i + 1}`, s, id, s.queues.reader),
    ),
    backfill: queue('backfill-queue', s, s.names.queues.backfill, s.queues.backfill),
  };
}

const seconds = (n: number) => `${n}s`;

function queue(logical: string, s: InfraSettings, name: string, q: QueueSettings): gcp.cloudtasks.Queue {
  return new gcp.cloudtasks.Queue(logical, {
    name,
    project: s.project,
    location: s.region,
    rateLimits: {
      maxDispatchesPerSecond: q.maxDispatchesPerSecond,
      maxConcurrentDispatches: q.maxConcurrentDispatches,
    },
    retryConfig: {
      maxAttempts: q.maxAttempts,
      minBackoff: seconds(q.minBackoffSeconds),
      maxBackoff: seconds(q.maxBackoffSeconds),
      maxDoublings: q.maxDoublings,
      // Unlimited duration: the attempt count is the bound (both must be exceeded to give up).
      maxRetryDuration: '0s',
    },
    // Log a sample of dispatches: enough to debug a stuck partition, cheap when busy.
    stackdriverLoggingConfig: { samplingRatio: 0.1 },
  });
}
