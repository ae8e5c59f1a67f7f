/**
 * Mutation sink port: one BatchWrite call — every mutation its own group — reporting a status per group.
 * Groups are applied independently and in no specified order; a call may break partway, leaving some groups
 * without a status (applied or not: nobody knows). Implementations: in-memory, and Cloud Spanner.
 */

import type { Timestamp } from '../domain/timestamp';
import type { TypedMutation } from '../domain/writer/mutations';
import type { GroupStatus } from '../domain/writer/policy';

/** The status of one group; `position` is the mutation's position in the call. */
export interface GroupReport {
  position: number;
  status: GroupStatus;
  /** Set when the group was applied. */
  commitTimestamp?: Timestamp;
}

/** What one call reported. Groups with no report got no status. */
export interface BatchWriteResult {
  reports: GroupReport[];
  /** Set when the call itself failed (before any report, or partway through the stream). */
  callError?: GroupStatus;
}

/** Options of one call. */
export interface BatchWriteOptions {
  /** The call is abandoned after this long (its unreported groups then have no status). */
  timeoutMs: number;
  /** Spanner transaction tag of the groups. */
  tag?: string;
}

/** Writes mutations to Spanner. Never throws for what Spanner answered: failures are in the result. */
export interface MutationSink {
  batchWrite(mutations: TypedMutation[], options: BatchWriteOptions): Promise<BatchWriteResult>;
}
