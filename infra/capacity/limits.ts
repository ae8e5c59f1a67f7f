/**
 * The limits of Google Cloud that one pipeline meets as it grows, each with where it is documented. A limit
 * is `hard` when no setting of ours passes it (a quota of the project or the queue, raised only by Google or
 * not at all), `ramp` when the service scales past it given time (GCS buckets), `setting` when it is one of
 * our own Pulumi settings.
 */

export type LimitKind = 'hard' | 'ramp' | 'setting';

export interface Limit {
  /** What is counted, in the words of the table. */
  what: string;
  value: number;
  kind: LimitKind;
  /** Where it is written down. */
  source: string;
  /** Whether several pipelines in one project share it (then sharding the pipeline does not pass it). */
  perProject: boolean;
}

const TASKS =
  'Cloud Tasks RateLimits (cloud.google.com/tasks/docs/reference/rest/v2/projects.locations.queues)';
const WRITE_QUOTAS = 'BigQuery quotas, Storage Write API (cloud.google.com/bigquery/quotas#write-api-limits)';

export const LIMITS = {
  dispatchesPerSecond: {
    what: 'Cloud Tasks dispatches per second, one queue',
    value: 500,
    kind: 'hard',
    source: `${TASKS}: max_dispatches_per_second, at most 500`,
    perProject: false,
  },
  concurrentDispatches: {
    what: 'Cloud Tasks concurrent dispatches, one queue',
    value: 5_000,
    kind: 'hard',
    source: `${TASKS}: max_concurrent_dispatches, at most 5,000`,
    perProject: false,
  },
  objectWritesPerSecond: {
    what: 'GCS writes per second, one ledger object',
    value: 1,
    kind: 'hard',
    source: 'Cloud Storage quotas (cloud.google.com/storage/quotas): about one update per second per object',
    perProject: false,
  },
  bucketWritesPerSecond: {
    what: 'GCS writes per second, the ledger bucket',
    value: 1_000,
    kind: 'ramp',
    source:
      'Cloud Storage quotas (cloud.google.com/storage/quotas): a bucket starts at about 1,000 writes/s, then scales',
    perProject: false,
  },
  connectionsRegion: {
    what: 'Storage Write connections, one region',
    value: 5_000,
    kind: 'hard',
    source: `${WRITE_QUOTAS}: concurrent connections, 5,000 per region (client project)`,
    perProject: true,
  },
  connectionsMultiRegion: {
    what: 'Storage Write connections, a multi-region',
    value: 20_000,
    kind: 'hard',
    source: `${WRITE_QUOTAS}: concurrent connections, 20,000 per multi-region (client project)`,
    perProject: true,
  },
  createStreamsPerHour: {
    what: 'CreateWriteStream calls per hour',
    value: 10_000,
    kind: 'hard',
    source: `${WRITE_QUOTAS}: CreateWriteStream, 10,000 streams per hour, per project, per region`,
    perProject: true,
  },
  throughputRegion: {
    what: 'Storage Write bytes per second, one region',
    value: 300e6,
    kind: 'hard',
    source: `${WRITE_QUOTAS}: throughput, 300 MB/s in a region other than US and EU`,
    perProject: true,
  },
  throughputMultiRegion: {
    what: 'Storage Write bytes per second, US or EU',
    value: 3e9,
    kind: 'hard',
    source: `${WRITE_QUOTAS}: throughput, 3 GB/s in the US and EU multi-regions`,
    perProject: true,
  },
  requestConcurrency: {
    what: 'requests per Cloud Run instance',
    value: 1_000,
    kind: 'hard',
    source:
      'Cloud Run functions concurrency (cloud.google.com/functions/docs/configuring/concurrency): at most 1,000',
    perProject: false,
  },
} as const satisfies Record<string, Limit>;

/** Where Datastream says a Spanner source may stop keeping up (datastream/docs/sources-spanner). */
export const DATASTREAM_CEILINGS = {
  partitions: 10_000,
  modsPerSecond: 60_000,
  bytesPerSecond: 60 * 2 ** 20,
};
