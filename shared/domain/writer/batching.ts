/**
 * Batching: mutations go into BatchWrite requests bounded by cells, mutations and bytes, flushing when the
 * next mutation would pass any of them. The limits are correctness bounds first — a request the service
 * rejects as a whole fails every mutation in it — so they sit well below the service's own (80,000 mutations
 * per commit, 100 MiB per request). A single mutation above a limit travels alone.
 */
import type { TypedMutation } from './mutations';

/** The three limits. */
export interface BatchLimits {
  maxCells: number;
  maxMutations: number;
  maxBytes: number;
}

/** The defaults (inherited from Beam's SpannerIO, as the connector does). */
export const DEFAULT_BATCH_LIMITS: BatchLimits = {
  maxCells: 5_000,
  maxMutations: 500,
  maxBytes: 1024 * 1024,
};

/** The service's limits: mutations per commit (index entries included) and bytes per request. */
export const SERVICE_LIMITS = { mutations: 80_000, bytes: 100 * 1024 * 1024 } as const;

/** Why a batch was closed: the limit the next mutation would have passed, or the end of the input. */
export type FlushReason = 'cells' | 'mutations' | 'bytes' | 'end';

/** One BatchWrite request's worth of mutations. */
export interface Batch {
  mutations: TypedMutation[];
  cells: number;
  bytes: number;
  reason: FlushReason;
}

function passes(batch: Batch, m: TypedMutation, l: BatchLimits): FlushReason | undefined {
  if (batch.mutations.length === 0) return undefined;
  if (batch.cells + m.cells > l.maxCells) return 'cells';
  if (batch.mutations.length + 1 > l.maxMutations) return 'mutations';
  if (batch.bytes + m.bytes > l.maxBytes) return 'bytes';
  return undefined;
}

/** Splits mutations, in order, into batches within the limits. */
export function toBatches(mutations: TypedMutation[], limits: BatchLimits): Batch[] {
  const batches: Batch[] = [];
  let current: Batch = { mutations: [], cells: 0, bytes: 0, reason: 'end' };
  for (const m of mutations) {
    const reason = passes(current, m, limits);
    if (reason) {
      current.reason = reason;
      batches.push(current);
      current = { mutations: [], cells: 0, bytes: 0, reason: 'end' };
    }
    current.mutations.push(m);
    current.cells += m.cells;
    current.bytes += m.bytes;
  }
  if (current.mutations.length) batches.push(current);
  return batches;
}

/**
 * Warnings about limits that cannot take effect or exceed the service's: each names both values, so an
 * operator sees at startup which setting is dead.
 */
export function limitWarnings(l: BatchLimits): string[] {
  const warnings: string[] = [];
  if (l.maxMutations > l.maxCells)
    warnings.push(
      `maxBatchMutations (${l.maxMutations}) can never be reached: every mutation costs at least one cell and maxBatchCells is ${l.maxCells}`,
    );
  if (l.maxCells > SERVICE_LIMITS.mutations)
    warnings.push(
      `maxBatchCells (${l.maxCells}) is above the service's ${SERVICE_LIMITS.mutations} mutations per commit: a full batch would be rejected whole`,
    );
  if (l.maxBytes > SERVICE_LIMITS.bytes)
    warnings.push(
      `maxBatchBytes (${l.maxBytes}) is above the service's ${SERVICE_LIMITS.bytes}-byte request limit: a full batch would be rejected whole`,
    );
  return warnings;
}
