/** Backfill jobs of the demo pipeline over its Orders table alone, as the job store holds them. */
import { type BackfillJob, JOB_FORMAT } from '../../../shared/domain/backfill/job';
import type { TableSchema } from '../../../shared/domain/information-schema';
import type { Timestamp } from '../../../shared/domain/timestamp';
import { ORDERS } from './support';

/**
 * A job of plan p1 reading Orders' OrderId into the replica `orders` (no Data Boost, medium priority), in
 * `partitions` partitions; still going unless `finishedAt` and `error` say otherwise.
 */
export function ordersJob(p: {
  id: string;
  state: BackfillJob['state'];
  snapshot: BackfillJob['snapshot'];
  partitions: number;
  createdAt: Timestamp;
  startedAt: Timestamp | null;
  schema?: TableSchema;
}): BackfillJob {
  return {
    format: JOB_FORMAT,
    id: p.id,
    pipeline: 'demo',
    origin: 'http',
    state: p.state,
    snapshot: p.snapshot,
    plan: 'p1',
    dataBoost: false,
    priority: 'medium',
    targets: ['replica'],
    tables: [
      {
        name: 'Orders',
        schema: p.schema ?? ORDERS,
        columns: ['OrderId'],
        replica: 'orders',
        firstPartition: 0,
        partitions: p.partitions,
      },
    ],
    partitions: p.partitions,
    createdAt: p.createdAt,
    startedAt: p.startedAt,
    finishedAt: null,
    error: null,
  };
}
