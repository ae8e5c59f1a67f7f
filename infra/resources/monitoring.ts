/** Log-based metrics from the functions' structured logs, alert policies, and one dashboard. */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import { functionsLogFilter, LOG_METRICS, type LogMetricSpec } from '../log-contract';
import type { InfraSettings } from '../settings';

/** The monitoring resources, metrics by id. */
export interface Monitoring {
  metrics: Record<string, gcp.logging.Metric>;
  alerts: {
    lag: gcp.monitoring.AlertPolicy;
    retention: gcp.monitoring.AlertPolicy;
    failed: gcp.monitoring.AlertPolicy;
    partitionFailed: gcp.monitoring.AlertPolicy;
    deadLettered: gcp.monitoring.AlertPolicy;
    writerRouted: gcp.monitoring.AlertPolicy;
    writerFailed: gcp.monitoring.AlertPolicy;
    writerRejected: gcp.monitoring.AlertPolicy;
    writerErrors: gcp.monitoring.AlertPolicy;
  };
  dashboard: gcp.monitoring.Dashboard;
}

/** Creates metrics, alerts and the dashboard. */
export function createMonitoring(s: InfraSettings): Monitoring {
  const base = functionsLogFilter(Object.values(s.names.functions));
  const metrics = Object.fromEntries(LOG_METRICS.map((m) => [m.id, logMetric(s, base, m)]));
  const type = (id: string) => pulumi.interpolate`logging.googleapis.com/user/${metricOf(metrics, id).name}`;
  const alerts = {
    lag: lagAlert(s, type('replication_lag')),
    retention: countAlert(
      s,
      'retention-alert',
      'sluice: change-stream retention in danger',
      type('retention_danger'),
      RETENTION_DOC,
    ),
    failed: failedAlert(s, type('pipeline_failed'), type('replication_lag')),
    partitionFailed: countAlert(
      s,
      'partition-failed-alert',
      'sluice: a partition failed',
      type('partition_failed'),
      PARTITION_FAILED_DOC,
    ),
    deadLettered: countAlert(
      s,
      'dead-lettered-alert',
      'sluice: change records dead-lettered',
      type('dead_lettered'),
      DEAD_LETTERED_DOC,
    ),
    writerRouted: countAlert(
      s,
      'writer-routed-alert',
      'sluice: writer routed mutations to dead letters',
      type('writer_routed'),
      ROUTED_DOC,
    ),
    writerFailed: countAlert(
      s,
      'writer-failed-alert',
      'sluice: writer requests failed',
      type('writer_failed'),
      FAILED_DOC,
    ),
    writerRejected: countAlert(
      s,
      'writer-rejected-alert',
      'sluice: writer requests rejected',
      type('writer_rejected'),
      REJECTED_DOC,
    ),
    writerErrors: countAlert(
      s,
      'writer-errors-alert',
      'sluice: writer requests not handled',
      type('writer_errors'),
      ERRORS_DOC,
    ),
  };
  return {
    metrics,
    alerts,
    dashboard: dashboard(
      s,
      LOG_METRICS.map((m) => type(m.id)),
    ),
  };
}

function metricOf(metrics: Record<string, gcp.logging.Metric>, id: string): gcp.logging.Metric {
  const m = metrics[id];
  if (!m) throw new Error(`no log metric ${id}`);
  return m;
}

function logMetric(s: InfraSettings, base: string, m: LogMetricSpec): gcp.logging.Metric {
  const labelExtractors = {
    pipeline: 'EXTRACT(labels.pipeline)',
    function: 'EXTRACT(resource.labels.service_name)',
  };
  const labels = Object.keys(labelExtractors).map((key) => ({ key, valueType: 'STRING' }));
  const common = { project: s.project, name: `${s.prefix}/${m.id}`, description: m.description };
  const filter = `${base} AND ${m.match}`;
  if (!m.valueField) {
    return new gcp.logging.Metric(`metric-${m.id}`, {
      ...common,
      filter,
      labelExtractors,
      metricDescriptor: { metricKind: 'DELTA', valueType: 'INT64', unit: m.unit, labels },
    });
  }
  return new gcp.logging.Metric(`metric-${m.id}`, {
    ...common,
    filter,
    labelExtractors,
    valueExtractor: `EXTRACT(${m.valueField})`,
    metricDescriptor: { metricKind: 'DELTA', valueType: 'DISTRIBUTION', unit: m.unit, labels },
    // 1, 2, 4, … ~1e6: seconds of lag up to days, records up to a million per window.
    bucketOptions: { exponentialBuckets: { numFiniteBuckets: 21, growthFactor: 2, scale: 1 } },
  });
}

const WINDOW = '300s';

function policyCommon(s: InfraSettings, doc: string) {
  return {
    project: s.project,
    combiner: 'OR',
    notificationChannels: s.alerts.notificationChannels,
    documentation: { content: doc, mimeType: 'text/markdown' },
    userLabels: { app: 'sluice' },
  };
}

/** Lag: the 99th percentile of the logged lag stays above the threshold for five minutes. */
function lagAlert(s: InfraSettings, lagType: pulumi.Output<string>): gcp.monitoring.AlertPolicy {
  return new gcp.monitoring.AlertPolicy('lag-alert', {
    ...policyCommon(
      s,
      `Replication lag above ${s.alerts.lagSeconds}s. Check \`GET /status\` and reader failures.`,
    ),
    displayName: `sluice: replication lag above ${s.alerts.lagSeconds}s`,
    conditions: [
      {
        displayName: 'lag p99',
        conditionThreshold: {
          filter: pulumi.interpolate`metric.type="${lagType}" AND resource.type="cloud_run_revision"`,
          comparison: 'COMPARISON_GT',
          thresholdValue: s.alerts.lagSeconds,
          duration: WINDOW,
          aggregations: [{ alignmentPeriod: WINDOW, perSeriesAligner: 'ALIGN_PERCENTILE_99' }],
        },
      },
    ],
  });
}

/** Fires on any matching log entry within five minutes. */
function countCondition(displayName: string, metricType: pulumi.Output<string>) {
  return {
    displayName,
    conditionThreshold: {
      filter: pulumi.interpolate`metric.type="${metricType}" AND resource.type="cloud_run_revision"`,
      comparison: 'COMPARISON_GT',
      thresholdValue: 0,
      duration: '0s',
      aggregations: [{ alignmentPeriod: WINDOW, perSeriesAligner: 'ALIGN_SUM' }],
    },
  };
}

const PARTITION_FAILED_DOC =
  'A partition stopped on a permanent failure and holds the watermark: `GET /status` names it in ' +
  '`lastErrors` (table, column, key, error). Fix the cause, then `POST /partitions/retry` on the backfill ' +
  'function (docs/operating.md).';
const DEAD_LETTERED_DOC =
  'Change records the replica could not take were set aside under `SLUICE_ON_BAD_RECORD=dead-letter`: ' +
  '`GET /dead-letters` on the backfill function lists them by table and reason. Fix the cause, then ' +
  '`POST /dead-letters/replay` (docs/operating.md).';
const RETENTION_DOC =
  'A position is close to the change-stream retention: it will expire unless readers catch up.';
const ROUTED_DOC =
  'The writer routed mutations to the failure handler (dead letters in the ledger bucket, named in the ' +
  '`writer.request` log entry as `deadLetter`): duplicates of inserts, invalid values, or schema violations ' +
  'under `constraintViolationPolicy: route-to-failure-handler`. Inspect and replay them (docs/writer.md).';
const FAILED_DOC =
  'Writer requests were answered non-2xx with failed or unapplied mutations: the producer (or Pub/Sub) ' +
  'keeps and retries them. `failures` in the `writer.request` log entry names each one and its status.';

const REJECTED_DOC =
  'The writer refused requests as malformed or too large (400 / 413; nothing of them was written). ' +
  '`problems` in the `writer.rejected` log entry names each one. A producer will resend such a request ' +
  'unchanged: a Pub/Sub push subscription redelivers it until its retention drops it unless it has a ' +
  'dead-letter topic, so fix the producer (docs/writer.md).';
const ERRORS_DOC =
  'The writer answered requests 500 / 503 / 429 without handling them: it could not start (configuration, ' +
  'the schema read, a lost permission) or failed inside. The `writer.failed` log entry has the error; ' +
  'producers keep retrying until it is fixed.';

function countAlert(s: InfraSettings, logical: string, title: string, t: pulumi.Output<string>, doc: string) {
  return new gcp.monitoring.AlertPolicy(logical, {
    ...policyCommon(s, doc),
    displayName: title,
    conditions: [countCondition(`${title.replace(/^sluice: /, '')} logged`, t)],
  });
}

/** Failed: the pipeline logged that it stopped, or the scheduler has not ticked for fifteen minutes. */
function failedAlert(s: InfraSettings, failed: pulumi.Output<string>, lag: pulumi.Output<string>) {
  return new gcp.monitoring.AlertPolicy('failed-alert', {
    ...policyCommon(
      s,
      'The pipeline stopped or the scheduler stopped ticking. `GET /status` names the cause.',
    ),
    displayName: 'sluice: pipeline failed',
    conditions: [
      countCondition('pipeline failed logged', failed),
      {
        displayName: 'no scheduler tick',
        conditionAbsent: {
          filter: pulumi.interpolate`metric.type="${lag}" AND resource.type="cloud_run_revision"`,
          duration: '900s',
          aggregations: [{ alignmentPeriod: WINDOW, perSeriesAligner: 'ALIGN_COUNT' }],
        },
      },
    ],
  });
}

function dashboard(s: InfraSettings, types: pulumi.Output<string>[]): gcp.monitoring.Dashboard {
  const json = pulumi.all(types).apply((resolved) =>
    JSON.stringify({
      displayName: `sluice (${s.prefix})`,
      mosaicLayout: {
        columns: 12,
        tiles: resolved.map((t, i) => ({
          xPos: (i % 2) * 6,
          yPos: Math.floor(i / 2) * 4,
          width: 6,
          height: 4,
          widget: chart(LOG_METRICS[i]?.description ?? t, t, LOG_METRICS[i]?.valueField !== undefined),
        })),
      },
    }),
  );
  return new gcp.monitoring.Dashboard('dashboard', { project: s.project, dashboardJson: json });
}

function chart(title: string, metricType: string, distribution: boolean) {
  return {
    title,
    xyChart: {
      dataSets: [
        {
          plotType: 'LINE',
          timeSeriesQuery: {
            timeSeriesFilter: {
              filter: `metric.type="${metricType}" resource.type="cloud_run_revision"`,
              aggregation: {
                alignmentPeriod: '60s',
                perSeriesAligner: distribution ? 'ALIGN_PERCENTILE_99' : 'ALIGN_SUM',
                crossSeriesReducer: distribution ? 'REDUCE_MAX' : 'REDUCE_SUM',
                groupByFields: ['metric.label.pipeline'],
              },
            },
          },
        },
      ],
    },
  };
}
