/**
 * The compact live view: watermark lag, partitions (active / waiting / finished since start), rows per replica,
 * workload counters, and errors with the latest one's message. On a TTY it redraws in place, with any
 * other output (log lines, messages) printed above it; otherwise the caller prints one line every few
 * seconds.
 */
import { diffMillis, type Timestamp } from '../shared/domain/timestamp';
import type { FunctionLogLine } from './function-process';
import type { PipelineProgress } from './ledger-view';
import type { WorkloadStats } from './workload';

/** Everything one frame shows. */
export interface ViewState {
  now: Timestamp;
  progress: PipelineProgress;
  /**
   * Partitions that finished since the stack started ({@link FinishedPartitions}): the ledger's own count
   * goes down as the scheduler deletes finished entries whose children started.
   */
  finishedSinceStart: number;
  rows: Array<{ table: string; rows: number | null }>;
  workload: WorkloadStats | null;
  functionErrors: number;
  /** The latest error of a function (`<function>: <event>: <message>`), of the workload, or null. */
  lastError: string | null;
}

function lag(state: ViewState): string {
  const w = state.progress.watermark;
  if (w === null) return state.progress.epoch === null ? 'not started' : 'n/a';
  return `${(Math.max(0, diffMillis(state.now, w)) / 1000).toFixed(1)}s`;
}

function partitions(state: ViewState): string {
  const p = state.progress.partitions;
  const active = p.leased + p.ready;
  return `active ${active} waiting ${p.waiting} finished since start ${state.finishedSinceStart} failed ${p.failed}`;
}

/**
 * Counts the partitions that finished, from the reader's `partition.finished` log lines (one per partition
 * that reached its end; labelled with the partition): the ledger cannot say, since the scheduler deletes a
 * finished entry once its children started (ADR-2206). A partition counts once however often it is logged.
 */
export class FinishedPartitions {
  private readonly ids = new Set<string>();

  /** Takes one function log line; only the reader's `partition.finished` lines count. */
  observe(line: FunctionLogLine): void {
    if (line.function !== 'reader' || line.json?.message !== 'partition.finished') return;
    const labels = (line.json['logging.googleapis.com/labels'] ?? {}) as Record<string, unknown>;
    const id = labels.partition ?? String(labels.window ?? '').split('@')[0];
    if (id) this.ids.add(String(id));
  }

  /** Distinct partitions finished so far. */
  get count(): number {
    return this.ids.size;
  }
}

function rows(state: ViewState): string {
  return state.rows.map((r) => `${r.table}=${r.rows ?? '-'}`).join(' ');
}

function workload(state: ViewState): string {
  const w = state.workload;
  return w ? `txns ${w.transactions} mods ${w.mods} failed ${w.failures}` : 'no workload';
}

function latest(state: ViewState): string | null {
  return state.lastError ?? state.progress.errors[0] ?? null;
}

/** One line (non-TTY output). */
export function statusLine(state: ViewState): string {
  const errors = state.functionErrors + state.progress.errors.length;
  const last = errors > 0 ? latest(state) : null;
  return (
    `lag ${lag(state)} | partitions ${partitions(state)} | rows ${rows(state)} | ${workload(state)} | errors ${errors}` +
    (last ? ` (latest: ${last.slice(0, 160)})` : '')
  );
}

/** A few lines, redrawn in place on a TTY. */
export function statusFrame(state: ViewState): string[] {
  const lines = [
    `watermark lag  ${lag(state)}`,
    `partitions     ${partitions(state)}`,
    `rows           ${rows(state)}`,
    `workload       ${workload(state)}`,
    `errors         functions ${state.functionErrors}, ledger ${state.progress.errors.length}`,
  ];
  const last = latest(state);
  if (last) lines.push(`last error     ${last.slice(0, 160)}`);
  return lines;
}

/**
 * The terminal: a frame redrawn in place at the bottom, and lines printed above it. On a stream that is
 * not a TTY, lines are written as they come and frames are not drawn.
 */
export class Screen {
  private frame: string[] = [];
  private drawn = 0;
  constructor(private readonly out: NodeJS.WritableStream & { isTTY?: boolean }) {}

  /** Whether frames are drawn (the stream is a terminal). */
  get tty(): boolean {
    return this.out.isTTY === true;
  }

  /** Prints `text` (one or more lines) above the frame. */
  print(text: string): void {
    if (!this.tty) {
      this.out.write(`${text}\n`);
      return;
    }
    this.erase();
    this.out.write(`${text}\n`);
    this.paint();
  }

  /** Replaces the frame (TTY only). */
  draw(lines: string[]): void {
    if (!this.tty) return;
    this.erase();
    this.frame = lines;
    this.paint();
  }

  /** Leaves the current frame on screen as ordinary output; later lines go below it. */
  release(): void {
    this.frame = [];
    this.drawn = 0;
  }

  private erase(): void {
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[J`);
    this.drawn = 0;
  }

  private paint(): void {
    if (this.frame.length === 0) return;
    this.out.write(`${this.frame.join('\n')}\n`);
    this.drawn = this.frame.length;
  }
}
