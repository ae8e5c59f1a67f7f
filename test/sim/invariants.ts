/**
 * Every invariant the simulator checks, in one place. `stepInvariants` hold after every scheduler tick, under
 * any fault; `finalInvariants` hold once the run has caught up with no more faults (liveness).
 */
import type { PipelineStatus } from '../../shared/app/ledger/status';
import { partitionId } from '../../shared/domain/ledger';
import { parseTimestamp, type Timestamp } from '../../shared/domain/timestamp';
import type { SimWorld } from './world';

/** A broken invariant: its name (as listed in docs/testing.md) and what was seen. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
  constructor(
    readonly invariant: string,
    detail: string,
  ) {
    super(`${invariant}: ${detail}`);
  }
}

function check(ok: boolean, invariant: string, detail: () => string): void {
  if (!ok) throw new InvariantError(invariant, detail());
}

/** The replicated tables: source table → replica destination (history only for Orders). */
export const REPLICAS: ReadonlyArray<[string, string]> = [
  ['Orders', 'orders'],
  ['Items', 'items'],
];

/**
 * replica-covers-watermark: every key whose last change is at or before the watermark holds that change in
 * the replica (the watermark never passes a change not yet in the sinks).
 */
function replicaCoversWatermark(world: SimWorld, watermark: Timestamp): void {
  for (const [table, destination] of REPLICAS) {
    const replica = new Map(world.h.replica.rows(destination).map((r) => [String(r.Id), r.Val]));
    for (const [id, versions] of world.h.script.versions.get(table) ?? []) {
      const last = versions[versions.length - 1]!;
      if (last.at > watermark) continue;
      const got = replica.get(String(id)) ?? null;
      check(got === last.val, 'replica-covers-watermark', () => {
        return `${table} Id=${id} is ${JSON.stringify(got)} in the replica, but changed to ${JSON.stringify(last.val)} at ${last.at}, at or before the watermark ${watermark}`;
      });
    }
  }
}

/** history-exactly-once (safety half): no change_id twice in a history table. */
function historyNoDuplicate(world: SimWorld): void {
  const rows = world.h.history.rows('orders_history');
  const distinct = new Set(rows.map((r) => r.change_id)).size;
  check(distinct === rows.length, 'history-exactly-once', () => {
    return `orders_history holds ${rows.length} rows for ${distinct} change ids`;
  });
}

/** failures-visible: a failed partition is named in the status' errors. */
function failuresVisible(status: PipelineStatus): void {
  check(status.partitions.failed === 0 || status.lastErrors.length > 0, 'failures-visible', () => {
    return `${status.partitions.failed} failed partitions and no error in the status`;
  });
}

/**
 * child-after-parents: a partition whose position moved has every parent finished (a finished entry the
 * scheduler has since removed counts, once a tick saw it finished).
 */
async function childAfterParents(world: SimWorld): Promise<void> {
  const { partitions } = await world.h.ledger.listPartitions();
  const byId = new Map(partitions.map((p) => [p.view.id, p.view]));
  for (const { view } of partitions) if (view.state === 'finished') world.finished.add(view.id);
  for (const { view } of partitions) {
    if (view.position < view.start) continue;
    for (const parent of view.parentIds) {
      const state = byId.get(parent)?.state ?? (world.finished.has(parent) ? 'finished' : undefined);
      check(state === 'finished', 'child-after-parents', () => {
        return `partition ${view.id} was read while its parent ${parent} is ${state ?? 'absent'}`;
      });
    }
  }
}

/** Checked after every tick. */
export async function stepInvariants(world: SimWorld, status: PipelineStatus): Promise<void> {
  const watermark = status.watermark === null ? null : parseTimestamp(status.watermark);
  if (watermark !== null) {
    check(world.watermark === null || watermark >= world.watermark, 'watermark-monotone', () => {
      return `the watermark moved back from ${world.watermark} to ${watermark}`;
    });
    world.watermark = watermark;
    replicaCoversWatermark(world, watermark);
  }
  historyNoDuplicate(world);
  failuresVisible(status);
  await childAfterParents(world);
}

/** Checked once the run caught up: the safety invariants, then completeness and health. */
export async function finalInvariants(world: SimWorld, status: PipelineStatus): Promise<void> {
  await stepInvariants(world, status);
  const { h } = world;
  check(status.partitions.failed === 0, 'no-partition-failed', () => JSON.stringify(status.lastErrors));
  check((status.lagSeconds ?? 0) < 60, 'caught-up', () => `lag ${status.lagSeconds}s after catching up`);
  for (const [table, destination] of REPLICAS) {
    const got = JSON.stringify(h.replica.rows(destination));
    check(got === JSON.stringify(h.expected(table)), 'replica-equals-source', () => {
      return `${destination} differs from ${table}`;
    });
  }
  const mods = [...h.script.parts.values()]
    .flatMap((p) => p.records)
    .filter((r) => r.tableName === 'Orders')
    .reduce((n, r) => n + r.mods.length, 0);
  const rows = h.history.rows('orders_history').length;
  check(rows === mods, 'history-exactly-once', () => `orders_history holds ${rows} rows for ${mods} mods`);
  const { partitions } = await h.ledger.listPartitions();
  const listed = new Map(partitions.map((p) => [p.view.id, p.view.state]));
  for (const part of h.script.parts.values()) {
    const id = partitionId(part.token);
    const state = listed.get(id) ?? (world.finished.has(id) ? 'finished' : undefined);
    check(state !== undefined, 'every-partition-read', () => `partition ${part.token} never recorded`);
    if (part.end !== null) {
      check(state === 'finished', 'every-partition-read', () => `ended partition ${part.token} is ${state}`);
    }
  }
}
