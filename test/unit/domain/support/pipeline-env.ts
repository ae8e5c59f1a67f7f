/** The variables every pipeline configuration needs except SLUICE_TABLES: one project, database and stream. */
export const PIPELINE_ENV = {
  SLUICE_PROJECT: 'my-project',
  SLUICE_SPANNER_INSTANCE: 'prod-1',
  SLUICE_SPANNER_DATABASE: 'shop',
  SLUICE_SPANNER_STREAM: 'ShopChanges',
  SLUICE_BIGQUERY_DATASET: 'shop_cdc',
  SLUICE_LEDGER_BUCKET: 'my-project-sluice',
};
