/**
 * What the functions' handlers are called with outside the functions framework: a valid environment for
 * each function, a request, and a response that records what the handler answered.
 */
import type { HttpRequest } from '../../../shared/http/health';

/** Every variable the scheduler and the reader need, valid. */
export const PIPELINE_ENV = {
  SLUICE_PROJECT: 'my-project',
  SLUICE_SPANNER_INSTANCE: 'inst',
  SLUICE_SPANNER_DATABASE: 'db',
  SLUICE_SPANNER_STREAM: 'S',
  SLUICE_BIGQUERY_DATASET: 'ds',
  SLUICE_LEDGER_BUCKET: 'ledger-bucket',
  SLUICE_TABLES: '{"T":{"replica":"t"}}',
  SLUICE_READER_URL: 'https://reader.example.com/',
  SLUICE_READER_QUEUE: 'projects/my-project/locations/europe-west1/queues/readers',
};

/** {@link PIPELINE_ENV} and the backfill function's queue and URL. */
export const BACKFILL_ENV = {
  ...PIPELINE_ENV,
  SLUICE_BACKFILL_QUEUE: 'projects/my-project/locations/europe-west1/queues/backfill',
  SLUICE_BACKFILL_URL: 'https://backfill.example.com/',
};

/** A request with `headers` (names in any case). */
export function fakeRequest(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): HttpRequest {
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return { method, path, body, header: (name) => lower[name.toLowerCase()] };
}

/** A response that keeps the status code, the JSON body and the headers a handler sent. */
export function fakeResponse() {
  const res = {
    code: 0,
    body: undefined as unknown,
    headers: {} as Record<string, string>,
    status(c: number) {
      res.code = c;
      return res;
    },
    json(b: unknown) {
      res.body = b;
    },
    set(name: string, value: string) {
      res.headers[name] = value;
    },
  };
  return res;
}
