/**
 * Application settings and the one retry function every use case shares. Imports nothing of `shared/app/`.
 */
export { READS_AHEAD, readAhead } from './read-ahead';
export { DEFAULT_RETRY, type RetryPolicy, withRetries } from './retry';
export { type AppSettings, epochMillis, type Runtime } from './settings';
