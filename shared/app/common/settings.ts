/**
 * What the application services need to know besides the ports: the validated pipeline configuration plus the
 * deployment settings the functions get from the environment (see `shared/wiring/settings.ts`).
 */
import type { PipelineConfig } from '../../domain/config';
import type { Logger } from '../../domain/log';
import type { Timestamp } from '../../domain/timestamp';

/** Deployment settings of the scheduled replication. */
export interface AppSettings {
  config: PipelineConfig;
  /** URL the reader tasks are sent to. */
  readerUrl: string;
  /** Warn (`retention.danger`) when the watermark is within this margin of the stream's retention. */
  retentionMarginMs: number;
  /** `scheduled` mode: delay of the next window once a partition caught up with now. */
  idleDelayMs: number;
  /**
   * `scheduled` mode: cap of the idle delay, which doubles (about) with every consecutive window that saw only
   * heartbeats and falls back to `idleDelayMs` when data arrives (ADR-1201). Absent: no back-off.
   */
  idleMaxDelayMs?: number;
  /**
   * `scheduled` mode: a window that saw only heartbeats writes the ledger only once the position is at least
   * this old (ADR-1201). Absent or 0: every quiet window that moves the position writes it.
   */
  quietCheckpointMs?: number;
  /**
   * How long one reader request may run: the tasks' dispatch deadline less a margin (ADR-1505). A window
   * stops there at its last flushed boundary. Absent: no limit but the window's own reach.
   */
  requestDeadlineMs?: number;
  /** Key the reader seals its dead letters with (ADR-2305); absent: letters are written unsigned. */
  deadLetterKey?: Buffer;
  /** Where the writer puts its dead letters in the ledger bucket, when not its default (ADR-2203). */
  writerDeadLetterPrefix?: string;
}

/** Clock and ids, injected so tests control time and randomness. */
export interface Runtime {
  /** Wall-clock now as a nanosecond timestamp (for windows, leases, lag — never for data). */
  now: () => Timestamp;
  log: Logger;
}

/** Wall-clock milliseconds of a timestamp (task schedule times). */
export function epochMillis(t: Timestamp): number {
  return Number(t / 1_000_000n);
}
