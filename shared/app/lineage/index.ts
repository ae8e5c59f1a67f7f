/**
 * OpenLineage run events for the pipeline and each backfill.
 */
export { BackfillLineage } from './backfill';
export { PipelineLineage } from './pipeline';
export { LineageReporter, type LineageStats } from './reporter';
