/** The Cloud Tasks queues: one for reader windows, one for backfill partitions. */
import * as gcp from '@pulumi/gcp';
import type { InfraSettings } from '../settings';
import type { QueueSettings } from '../sizing';

/** Both queues. */
export interface Queues {
  reader: gcp.cloudtasks.Queue;
  backfill: gcp.cloudtasks.Queue;
}

/** Creates both queues with the rates and retries derived in `sizing.ts`. */
export function createQueues(s: InfraSettings): Queues {
  return {
    reader: queue('reader-queue', s, s.names.queues.reader, s.queues.reader),
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
