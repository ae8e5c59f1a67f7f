/**
 * Lineage wiring of a function instance: the reporter (log only, or log and the Data Lineage API through the
 * official client), the pipeline's lineage for the scheduler and the backfills' for the backfill function.
 */
import { LineageClient } from '@google-cloud/lineage';
import { credentials } from '@grpc/grpc-js';
import { DataLineageSink } from '../adapters/lineage/lineage-sink';
import { BackfillLineage, LineageReporter, PipelineLineage } from '../app/lineage';
import type { PipelineConfig } from '../domain/config';
import { type LineageSettings, parseLineageSettings } from '../domain/lineage/settings';
import type { Logger } from '../domain/log';
import type { SpannerCatalog } from '../ports/spanner-catalog';

/** The lineage services of one instance. */
export interface LineageWiring {
  settings: LineageSettings;
  reporter: LineageReporter;
  pipeline(catalog: Pick<SpannerCatalog, 'tableSchema'>): PipelineLineage;
  backfill: BackfillLineage;
  close(): Promise<void>;
}

function lineageClient(settings: LineageSettings): LineageClient {
  const m = settings.endpoint ? /^([^:]+):(\d+)$/.exec(settings.endpoint) : null;
  return m
    ? new LineageClient({ apiEndpoint: m[1]!, port: Number(m[2]), sslCreds: credentials.createInsecure() })
    : new LineageClient();
}

/** Builds the lineage services from the environment. @throws ConfigError naming a bad lineage variable. */
export function lineageFromEnv(
  env: Record<string, string | undefined>,
  config: PipelineConfig,
  log: Logger,
): LineageWiring {
  const settings = parseLineageSettings(env);
  const client = settings.target === 'api' ? lineageClient(settings) : undefined;
  const sink = client ? new DataLineageSink(client, config.project, settings.location!) : undefined;
  const reporter = new LineageReporter({ sink, log });
  return {
    settings,
    reporter,
    pipeline: (catalog) =>
      new PipelineLineage({ reporter, config, catalog, heartbeatMs: settings.heartbeatMs, log }),
    backfill: new BackfillLineage(reporter, config),
    close: async () => {
      await client?.close();
    },
  };
}
