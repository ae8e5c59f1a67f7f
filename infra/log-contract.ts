/**
 * What the log-based metrics read from the functions' structured logs (one JSON object per line in Cloud
 * Logging's shape: `jsonPayload.*` fields, ids under `logging.googleapis.com/labels` → `labels.*`). The
 * functions must log these events with these fields; `docs/deploy.md` lists them.
 */

/** A log-based metric: what to match and what number to take from the match. */
export interface LogMetricSpec {
  /** Short id; the metric is `logging.googleapis.com/user/<prefix>/<id>`. */
  id: string;
  description: string;
  /** Filter on top of "logs of this deployment's functions". */
  match: string;
  /** Field whose value is recorded (a distribution); absent: the metric counts matching entries. */
  valueField?: string;
  unit: string;
}

/** Cloud Logging filter for the logs of the deployment's functions. */
export function functionsLogFilter(serviceNames: readonly string[]): string {
  const services = serviceNames.map((n) => `resource.labels.service_name="${n}"`).join(' OR ');
  return `resource.type="cloud_run_revision" AND (${services})`;
}

/** The metrics, in dashboard order. */
export const LOG_METRICS: readonly LogMetricSpec[] = [
  {
    id: 'replication_lag',
    description: 'Seconds between now and the pipeline watermark, logged by every scheduler tick',
    match: 'jsonPayload.event="scheduler.tick"',
    valueField: 'jsonPayload.lagSeconds',
    unit: 's',
  },
  {
    id: 'records',
    description: 'Change-stream records read per reader window',
    match: 'jsonPayload.event="reader.window"',
    valueField: 'jsonPayload.records',
    unit: '1',
  },
  {
    id: 'rows',
    description: 'Rows written to BigQuery per reader window or backfill partition',
    match: '(jsonPayload.event="reader.window" OR jsonPayload.event="backfill.partition")',
    valueField: 'jsonPayload.rows',
    unit: '1',
  },
  {
    id: 'retries',
    description: 'Task deliveries that are retries (X-CloudTasks-TaskRetryCount above 0)',
    match: 'jsonPayload.event="task.start" AND jsonPayload.retryCount>0',
    unit: '1',
  },
  {
    id: 'failures',
    description: 'Log entries at ERROR or above',
    match: 'severity>=ERROR',
    unit: '1',
  },
  {
    id: 'retention_danger',
    description: 'Scheduler warnings that a position is about to fall out of the change-stream retention',
    match: 'jsonPayload.event="retention.danger"',
    unit: '1',
  },
  {
    id: 'pipeline_failed',
    description: 'The pipeline stopped (expired position, invalid stream, permanent failure)',
    match: 'jsonPayload.event="pipeline.failed"',
    unit: '1',
  },
  {
    id: 'partition_failed',
    description:
      'Partitions stopped by a permanent failure (a bad record under SLUICE_ON_BAD_RECORD=fail, …)',
    match: 'jsonPayload.event="partition.failed"',
    unit: '1',
  },
  {
    id: 'dead_lettered',
    description: 'Change records set aside as dead letters (SLUICE_ON_BAD_RECORD=dead-letter)',
    match: 'jsonPayload.event="record.dead-lettered"',
    valueField: 'jsonPayload.records',
    unit: '1',
  },
  ...writerMetric('writer_mutations', 'Mutations per writer request', 'mutations'),
  ...writerMetric(
    'writer_retried',
    'Writer group re-sends per request (mutationsRetried)',
    'mutationsRetried',
  ),
  ...writerMetric(
    'writer_transient_errors',
    'Transient Spanner errors per writer request',
    'transientErrors',
  ),
  ...writerMetric('writer_buffered_cells', 'Cells of the largest batch per writer request', 'bufferedCells'),
  ...writerMetric(
    'writer_buffered_bytes',
    'Estimated bytes of the largest batch per writer request',
    'bufferedBytes',
    'By',
  ),
  ...writerMetric(
    'writer_groups_routed',
    'Mutations routed to dead letters per writer request',
    'groupsRouted',
  ),
  {
    id: 'writer_routed',
    description: 'Writer requests that routed mutations to dead letters',
    match: 'jsonPayload.event="writer.request" AND jsonPayload.groupsRouted>0',
    unit: '1',
  },
  {
    id: 'writer_failed',
    description: 'Writer requests answered with failed or unapplied mutations (the producer retries them)',
    match: 'jsonPayload.event="writer.request" AND (jsonPayload.failed>0 OR jsonPayload.unapplied>0)',
    unit: '1',
  },
  {
    id: 'writer_rejected',
    description: 'Writer requests refused as malformed or too large (400 / 413; nothing written)',
    match: 'jsonPayload.event="writer.rejected"',
    unit: '1',
  },
  {
    id: 'writer_errors',
    description:
      'Writer requests answered 500 / 503 / 429 with no per-mutation answer (setup or internal failure)',
    match: 'jsonPayload.event="writer.failed"',
    unit: '1',
  },
];

/** A distribution of one numeric field of the writer's `writer.request` event. */
function writerMetric(id: string, description: string, field: string, unit = '1'): LogMetricSpec[] {
  return [
    {
      id,
      description,
      match: 'jsonPayload.event="writer.request"',
      valueField: `jsonPayload.${field}`,
      unit,
    },
  ];
}
