/**
 * The ledger state machine: partition entries, their pure transitions, the metadata projection the
 * scheduler lists, and the pipeline manifest. See `docs/ARCHITECTURE.md` (ledger format and protocol).
 */
export * from './codec';
export * from './create';
export * from './entry';
export * from './history-cursor';
export * from './lease';
export * from './lifecycle';
export * from './manifest';
export * from './metadata';
export * from './progress';
export * from './tick';
export * from './transitions';
export * from './window';
