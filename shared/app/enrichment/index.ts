/**
 * Lookups of dimension tables applied to change records and snapshot rows, their caches and their counters.
 * Uses `tables/` for the table plans.
 */
export { type EnrichedMods, Enrichments } from './apply';
export { EnrichmentCounters, type EnrichmentTotals } from './counters';
