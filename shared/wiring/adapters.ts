/**
 * The Spanner and BigQuery adapters every function builds from the shared clients: one place, so the
 * functions agree on options (dialect-aware quoting, value-issue logging, dataset).
 */
import { BigQueryCompletenessSink } from '../adapters/bigquery/completeness-sink';
import { BigQueryHistorySink } from '../adapters/bigquery/history-sink';
import { BigQueryReplicaSink } from '../adapters/bigquery/replica-sink';
import { SpannerCatalogReader } from '../adapters/spanner/catalog';
import { SpannerDimensionReader } from '../adapters/spanner/dimension-reader';
import { SpannerSnapshotSource } from '../adapters/spanner/snapshot-source';
import type { PipelineConfig } from '../domain/config';
import type { Logger } from '../domain/log';
import type { ValueIssue } from '../domain/value-mapping';
import type { Clients } from './clients';

/** The adapters over Spanner and BigQuery. */
export interface SpannerAndBigQueryAdapters {
  catalog: SpannerCatalogReader;
  snapshots: SpannerSnapshotSource;
  replica: BigQueryReplicaSink;
  history: BigQueryHistorySink;
  completeness: BigQueryCompletenessSink;
  /** Point reads of dimension tables, for the tables' lookups. */
  dimensions: SpannerDimensionReader;
}

/** Builds the adapters; values BigQuery cannot hold exactly are logged as warnings, once per read. */
export function createAdapters(
  clients: Clients,
  config: PipelineConfig,
  log: Logger,
): SpannerAndBigQueryAdapters {
  const onValueIssues = (table: string, issues: ValueIssue[]) =>
    log.warn('row values adjusted for BigQuery', { event: 'values.adjusted', table, issues });
  const catalog = new SpannerCatalogReader(clients.database);
  const sinkClients = { bigquery: clients.bigquery, writer: clients.writer };
  const sinkSettings = { projectId: config.project, dataset: config.bigquery.dataset };
  return {
    catalog,
    snapshots: new SpannerSnapshotSource(clients.database, {
      dialect: () => catalog.dialect(),
      onValueIssues,
    }),
    replica: new BigQueryReplicaSink(sinkClients, sinkSettings),
    history: new BigQueryHistorySink(sinkClients, sinkSettings),
    completeness: new BigQueryCompletenessSink(sinkClients, {
      ...sinkSettings,
      log: (event, fields) => log.notice(event, fields),
    }),
    dimensions: new SpannerDimensionReader(
      clients.database,
      (table) => catalog.tableSchema(table),
      onValueIssues,
    ),
  };
}
