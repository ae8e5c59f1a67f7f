/**
 * The endpoint overrides of the local stack and tests, read from the environment. Apart from the clients so
 * a function that needs only some of them (the writer: Spanner and Cloud Storage) does not load the BigQuery
 * and Cloud Tasks libraries to read four variables: loading a client library is most of a cold start.
 */
/** Endpoints that replace the Google defaults (local stack and tests). */
export interface Endpoints {
  /** Cloud Storage JSON API base URL, e.g. `http://127.0.0.1:9023`. */
  gcs?: string;
  /** Cloud Tasks gRPC `host:port` (insecure). */
  tasks?: string;
  /** BigQuery REST base URL. */
  bigqueryRest?: string;
  /** BigQuery Storage Write gRPC `host:port` (insecure). */
  bigqueryWrite?: string;
}

/** Reads the endpoint overrides from the environment (`SLUICE_*_ENDPOINT`); all unset in production. */
export function endpointsFromEnv(env: Record<string, string | undefined>): Endpoints {
  return {
    gcs: env.SLUICE_GCS_ENDPOINT || undefined,
    tasks: env.SLUICE_TASKS_ENDPOINT || undefined,
    bigqueryRest: env.SLUICE_BIGQUERY_REST_ENDPOINT || env.BIGQUERY_EMULATOR_HOST || undefined,
    bigqueryWrite: env.SLUICE_BIGQUERY_WRITE_ENDPOINT || undefined,
  };
}
