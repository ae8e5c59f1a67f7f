/**
 * The writer use case: mutations typed by the table schema, batched and sent to Spanner with retries and
 * dead letters.
 */
export { MutationWriter } from './writer';
