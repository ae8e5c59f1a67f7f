/**
 * The replicated tables: each table's plan as of a timestamp (columns, types, lookups resolved against the
 * catalog), the markers that record which BigQuery tables the pipeline ensured, and each table's status.
 * Below enrichment, the ledger and the sinks.
 */
export { resolveTableLookups, withEnrichedColumns } from './lookup-resolution';
export {
  forgetTable,
  type MarkerScope,
  markTable,
  type TableEvidence,
  type TableKind,
  tableEvidence,
} from './table-markers';
export { type ReplicatedTable, TableRegistry, watchedColumns } from './table-registry';
export { previousTables, syncTables, type TableStatus, withMissingTables } from './table-status';
