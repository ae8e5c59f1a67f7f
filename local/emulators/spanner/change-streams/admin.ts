/**
 * The engine's test controls: churn on demand, injected query ends, a view of every partition, and the
 * periodic churn timer that mimics the service replacing partitions on its own.
 */
import type { ChurnEvent } from './partitions';
import type { QueryFaults, QueryHold } from './query-faults';
import type { StreamRegistry } from './registry';

/** A partition as the admin handle reports it. */
export interface PartitionInfo {
  stream: string;
  token: string;
  startNs: bigint;
  endNs: bigint | null;
  parents: string[];
  children: string[];
  records: number;
}

/** Test controls. */
export interface ChangeStreamAdmin {
  /** Churns every stream's partitions now (or only `stream`'s); returns what happened. */
  churnNow(stream?: string): ChurnEvent[];
  /** The next change-stream query returns `k` rows, then fails with `code`. */
  endQueryAfter(k: number, code: number, message?: string): void;
  /**
   * Hold `id`: the next partition query (of `partition`, when given) that sends its child-partitions record
   * stays open after it until `releaseQuery(id)`.
   */
  holdQueryAfterEnd(id: number, partition?: string): void;
  /** Lets the query held by hold `id` end; false when this engine has no such hold. */
  releaseQuery(id: number): boolean;
  /** Every hold of this engine. */
  queryHolds(): QueryHold[];
  /** Every partition of every stream (or of `stream`). */
  partitions(stream?: string): PartitionInfo[];
  /** Stops the churn timer. */
  close(): void;
}

/** Every partition of every stream (or of `only`), as copies the caller may keep. */
export function partitionInfos(registry: StreamRegistry, only?: string): PartitionInfo[] {
  return registry.selected(only).flatMap(([key, set]) =>
    set.all().map((p) => ({
      stream: registry.nameOf(key),
      token: p.token,
      startNs: p.startNs,
      endNs: p.endNs,
      parents: [...p.parents],
      children: [...p.children],
      records: p.records.length,
    })),
  );
}

/** Calls `churn` every `churnMs` ms (none when 0 or unset); the timer never keeps the process alive. */
export function startChurnTimer(churn: () => void, churnMs: number | undefined): NodeJS.Timeout | undefined {
  const timer = churnMs && churnMs > 0 ? setInterval(churn, churnMs) : undefined;
  timer?.unref();
  return timer;
}

/** The admin handle over one engine's parts. */
export function createAdmin(parts: {
  churn: (stream?: string) => ChurnEvent[];
  faults: QueryFaults;
  registry: StreamRegistry;
  timer: NodeJS.Timeout | undefined;
}): ChangeStreamAdmin {
  return {
    churnNow: parts.churn,
    endQueryAfter: (k, code, message) => parts.faults.endAfter(k, code, message),
    holdQueryAfterEnd: (id, partition) => parts.faults.holdAfterEnd(id, partition),
    releaseQuery: (id) => parts.faults.release(id),
    queryHolds: () => parts.faults.holds(),
    partitions: (only) => partitionInfos(parts.registry, only),
    close: () => {
      if (parts.timer) clearInterval(parts.timer);
      parts.faults.releaseAll();
    },
  };
}
