/**
 * The Spanner and BigQuery adapters of the pipeline's ports, built from the shared clients. This is the one
 * seam where the change source, catalog and sinks are chosen.
 */
import { SpannerChangeSource } from '../adapters/spanner/change-source';
import type { ChangeRecord } from '../domain/change-record';
import type { PipelineConfig } from '../domain/config';
import type { Logger } from '../domain/log';
import type { ChangeQuery, ChangeSource } from '../ports/change-source';
import type { DimensionReader } from '../ports/dimension-reader';
import type { CompletenessSink, HistorySink, ReplicaSink } from '../ports/sinks';
import type { SpannerCatalog } from '../ports/spanner-catalog';
import { createAdapters } from './adapters';
import type { Clients } from './clients';
import type { DeploymentSettings } from './settings';

/** The ports backed by Spanner and BigQuery. */
export interface SourceAndSinks {
  source: ChangeSource;
  catalog: SpannerCatalog;
  replica: ReplicaSink;
  history: HistorySink;
  completeness: CompletenessSink;
  /** Point reads of dimension tables (the tables' lookups); absent: a table with lookups fails loudly. */
  dimensions?: DimensionReader;
}

/** Builds the Spanner and BigQuery adapters. */
export type SourceAndSinksFactory = (
  clients: Clients,
  config: PipelineConfig,
  deployment: DeploymentSettings,
  log: Logger,
) => SourceAndSinks;

/**
 * A change source that learns the database's dialect (which decides the query text) from the catalog on its
 * first query, so the composition root stays synchronous and a cold instance makes no call before it must.
 */
class DialectResolvingSource implements ChangeSource {
  private source: Promise<ChangeSource> | undefined;

  constructor(private readonly build: () => Promise<ChangeSource>) {}

  async *read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord> {
    this.source ??= this.build();
    this.source.catch(() => {
      this.source = undefined;
    });
    yield* (await this.source).read(query, signal);
  }
}

/** The production factory. */
export const pipelineAdapters: SourceAndSinksFactory = (clients, config, deployment, log) => {
  const { catalog, replica, history, completeness, dimensions } = createAdapters(clients, config, log);
  const source = new DialectResolvingSource(
    async () =>
      new SpannerChangeSource(clients.database, {
        dialect: await catalog.dialect(),
        stream: config.spanner.stream,
        priority: deployment.requestPriority,
        requestTag: `sluice-${config.pipeline}`,
      }),
  );
  return { source, catalog, replica, history, completeness, dimensions };
};
