/** Backfill domain: request, job model, state machine, progress, snapshot rows, errors and query text. */
export * from './job';
export * from './progress';
export * from './query';
export * from './request';
export * from './rows';
export * from './snapshot-errors';
export * from './state';
