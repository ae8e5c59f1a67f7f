/** The BigQuery dataset the pipeline writes, and the optional demo Spanner database. */
import * as gcp from '@pulumi/gcp';
import type { InfraSettings } from '../settings';

/**
 * The dataset only: tables are created by the pipeline from the Spanner schema (replica tables need a
 * primary key and history tables a partitioning column, both known only from the source tables).
 */
export function createDataset(s: InfraSettings): gcp.bigquery.Dataset {
  return new gcp.bigquery.Dataset('dataset', {
    project: s.project,
    datasetId: s.dataset.id,
    location: s.dataset.location,
    description: `sluice: replicas and history of Spanner ${s.spanner.instance}/${s.spanner.database}`,
    deleteContentsOnDestroy: s.dataset.deleteContentsOnDestroy,
    labels: { app: 'sluice' },
  });
}

/** DDL of the demo database: one table and a change stream that suits both replica and history sinks. */
export function demoDdl(stream: string): string[] {
  return [
    `CREATE TABLE Orders (
  OrderId STRING(36) NOT NULL,
  Customer STRING(MAX),
  Amount NUMERIC,
  Status STRING(32),
  UpdatedAt TIMESTAMP OPTIONS (allow_commit_timestamp = true),
) PRIMARY KEY (OrderId)`,
    `CREATE CHANGE STREAM ${stream} FOR ALL OPTIONS (retention_period = '7d', value_capture_type = 'NEW_ROW_AND_OLD_VALUES')`,
  ];
}

/**
 * Optional demo database (off by default) in the existing instance, named as the pipeline configuration
 * names the source database, so the pipeline reads it with no other change.
 */
export function createDemoDatabase(s: InfraSettings): gcp.spanner.Database | undefined {
  if (!s.demoDatabase) return undefined;
  return new gcp.spanner.Database('demo-database', {
    project: s.project,
    instance: s.spanner.instance,
    name: s.spanner.database,
    databaseDialect: 'GOOGLE_STANDARD_SQL',
    // Backfills read at a snapshot timestamp; a longer retention allows older snapshots.
    versionRetentionPeriod: '3d',
    ddls: demoDdl(s.spanner.stream),
    deletionProtection: false,
  });
}
