/**
 * The compact live view: watermark lag, partitions (active / waiting / finished), rows per replica,
 * workload counters and errors. On a TTY it redraws in place; otherwise the caller prints one line every
 * few seconds.
 */
import { diffMillis, type Timestamp } from '../shared/domain/timestamp';
import type { PipelineProgress } from './ledger-view';
import type { WorkloadStats } from './workload';

/** Everything one frame shows. */
export interface ViewState {
  now: Timestamp;
  progress: PipelineProgress;
  rows: Array<{ table: string; rows: number | null }>;
  workload: WorkloadStats | null;
  functionErrors: number;
  lastError: string | null;
}

function lag(state: ViewState): string {
  const w = state.progress.watermark;
  if (w === null) return state.progress.epoch === null ? 'not started' : 'n/a';
  return `${(Math.max(0, diffMillis(state.now, w)) / 1000).toFixed(1)}s`;
}

function partitions(p: PipelineProgress): string {
  const active = p.partitions.leased + p.partitions.ready;
  return `active ${active} waiting ${p.partitions.waiting} finished ${p.partitions.finished} failed ${p.partitions.failed}`;
}

function rows(state: ViewState): string {
  return state.rows.map((r) => `${r.table}=${r.rows ?? '-'}`).join(' ');
}

function workload(state: ViewState): string {
  const w = state.workload;
  return w ? `txns ${w.transactions} mods ${w.mods} failed ${w.failures}` : 'no workload';
}

/** One line (non-TTY output). */
export function statusLine(state: ViewState): string {
  const errors = state.functionErrors + state.progress.errors.length;
  return `lag ${lag(state)} | partitions ${partitions(state.progress)} | rows ${rows(state)} | ${workload(state)} | errors ${errors}`;
}

/** A few lines, redrawn in place on a TTY. */
export function statusFrame(state: ViewState): string[] {
  const lines = [
    `watermark lag  ${lag(state)}`,
    `partitions     ${partitions(state.progress)}`,
    `rows           ${rows(state)}`,
    `workload       ${workload(state)}`,
    `errors         functions ${state.functionErrors}, ledger ${state.progress.errors.length}`,
  ];
  const last = state.lastError ?? state.progress.errors[0];
  if (last) lines.push(`last error     ${last.slice(0, 100)}`);
  return lines;
}

/** Draws frames over each other on a TTY stream. */
export class TtyView {
  private drawn = 0;
  constructor(private readonly out: NodeJS.WriteStream) {}
  draw(lines: string[]): void {
    if (this.drawn > 0) this.out.write(`\x1b[${this.drawn}A\x1b[J`);
    this.out.write(`${lines.join('\n')}\n`);
    this.drawn = lines.length;
  }
}
