/**
 * The Spanner and BigQuery adapters of the pipeline's ports, built from the shared clients. This is the one
 * seam where the change source, catalog and sinks are chosen; until their adapters are wired here, a function
 * that needs them fails at startup with this message rather than at the first task.
 */
import type { PipelineConfig } from '../domain/config';
import { SluiceError } from '../domain/errors';
import type { ChangeSource } from '../ports/change-source';
import type { CompletenessSink, HistorySink, ReplicaSink } from '../ports/sinks';
import type { SpannerCatalog } from '../ports/spanner-catalog';
import type { Clients } from './clients';
import type { DeploymentSettings } from './settings';

/** The ports backed by Spanner and BigQuery. */
export interface SourceAndSinks {
  source: ChangeSource;
  catalog: SpannerCatalog;
  replica: ReplicaSink;
  history: HistorySink;
  completeness: CompletenessSink;
}

/** Builds the Spanner and BigQuery adapters. */
export type SourceAndSinksFactory = (
  clients: Clients,
  config: PipelineConfig,
  deployment: DeploymentSettings,
) => SourceAndSinks;

/** The production factory. */
export const pipelineAdapters: SourceAndSinksFactory = () => {
  throw new SluiceError(
    'permanent',
    'the Spanner change source / catalog and the BigQuery sinks are not wired into shared/wiring/pipeline-adapters.ts yet',
  );
};
