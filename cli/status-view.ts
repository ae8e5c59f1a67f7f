/**
 * `npx sluice status` for a person: every field of `GET /status` that says something is wrong is printed
 * (docs/operating.md, "What `GET /status` shows"), and the problems are summed up in one `unhealthy:` line
 * whose presence is the command's exit code 3 — a status that hides a failing table or a dead letter would
 * tell the operator something other than the truth.
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** What is wrong in a status document, one phrase each; empty when the pipeline is healthy. */
export function statusProblems(status: unknown): string[] {
  const s = obj(status);
  const problems: string[] = [];
  if (s.state === 'stopped') problems.push(`pipeline stopped: ${String(s.reason ?? 'no reason given')}`);
  const failed = Number(obj(s.partitions).failed ?? 0);
  if (failed > 0) problems.push(`${plural(failed, 'failed partition')} (npx sluice partitions retry)`);
  for (const t of list(s.tables).filter((t) => t.state === 'failing')) {
    problems.push(`table ${String(t.source)} failing`);
  }
  const pending = Number(obj(s.deadLetters).pending ?? 0);
  if (pending > 0) problems.push(`${plural(pending, 'dead letter')} pending (npx sluice dead-letters list)`);
  const stalled = list(s.stalled).length;
  if (stalled > 0) problems.push(`${plural(stalled, 'stalled lease')}`);
  if (obj(s.retention).danger === true) problems.push('change-stream retention in danger');
  return problems;
}

function headLines(s: Json): string[] {
  const p = obj(s.partitions);
  const counts = ['waiting', 'ready', 'leased', 'finished', 'failed'].map((k) => `${k} ${String(p[k] ?? 0)}`);
  return [
    `pipeline    ${String(s.pipeline ?? '?')}  ${String(s.state ?? '?')}${s.reason ? ` — ${String(s.reason)}` : ''}`,
    `watermark   ${String(s.watermark ?? '-')}  (lag ${s.lagSeconds ?? '-'} s)  updated ${String(s.updatedAt ?? '-')}`,
    `partitions  ${counts.join('  ')}  total ${String(p.total ?? 0)}`,
  ];
}

function partitionLines(s: Json): string[] {
  const lines = list(s.slowest)
    .slice(0, 5)
    .map((slow) => `  slow      ${String(slow.partition)}  ${String(slow.lagSeconds)} s behind`);
  for (const e of list(s.lastErrors).slice(0, 5)) {
    const where = e.partition ? `${String(e.partition)} ` : '';
    const state = e.state
      ? ` [${String(e.state)}${e.failures ? `, ${String(e.failures)} failures` : ''}]`
      : '';
    lines.push(`  error     ${String(e.at ?? '')} ${where}${String(e.kind)}${state}: ${String(e.message)}`);
  }
  for (const l of list(s.stalled)) {
    lines.push(
      `  stalled   ${String(l.partition)}  held by ${String(l.holder)}, lease expired ${String(l.secondsPastLease)} s ago`,
    );
  }
  return lines;
}

function deadLetterLine(s: Json): string[] {
  if (s.deadLetters === undefined) return [];
  const d = obj(s.deadLetters);
  const pending = Number(d.pending ?? 0);
  const byTable = Object.entries(obj(d.byTable)).map(([t, n]) => `${t} ${String(n)}`);
  const byReason = Object.entries(obj(d.byReason)).map(([r, n]) => `${r} ${String(n)}`);
  const w = obj(d.writer);
  const writerPending = Number(w.pending ?? 0);
  const settled = `${String(d.replayed ?? 0)} replayed, ${String(Number(d.discarded ?? 0) + Number(w.discarded ?? 0))} discarded`;
  if (pending === 0) return [`  dead letters 0 pending, ${settled}`];
  // The writer's letters count in `pending` (ADR-2203); their mutations are not records of the stream.
  const stream =
    pending > writerPending
      ? `${pending} pending (${String(d.pendingRecords ?? 0)} records): ${byTable.join(', ')}`
      : `${pending} pending`;
  return [
    `  dead letters ${stream}${writerPending > 0 ? `; writer ${writerPending} (npx sluice dead-letters list)` : ''}` +
      `${byReason.length ? `; ${byReason.join(', ')}` : ''}; ${settled}${d.truncated ? ' (at least)' : ''}`,
  ];
}

function retentionLine(s: Json): string[] {
  if (s.retention === null || s.retention === undefined) return [];
  const r = obj(s.retention);
  const danger = r.danger === true ? '  IN DANGER: find what holds the watermark' : '';
  return [`  retention ${String(r.seconds)} s, margin ${String(r.marginSeconds)} s${danger}`];
}

function tableLines(s: Json): string[] {
  return list(s.tables).map((t) => {
    const targets = [t.replica, t.history].filter((x) => typeof x === 'string').join(', ');
    const columns = typeof t.columns === 'number' && t.columns > 0 ? ` (${t.columns} columns)` : '';
    const reason = t.reason ? ` — ${String(t.reason)}` : '';
    return `  table     ${String(t.source ?? t.name ?? '?')}${targets ? ` → ${targets}` : ''}  ${String(t.state ?? '?')}${columns}${reason}`;
  });
}

/** The status document, a few lines a person reads; an `unhealthy:` line ends it when something is wrong. */
export function formatStatus(status: unknown): string {
  const s = obj(status);
  const problems = statusProblems(s);
  return [
    ...headLines(s),
    ...partitionLines(s),
    ...deadLetterLine(s),
    ...retentionLine(s),
    ...tableLines(s),
    problems.length > 0 ? `unhealthy: ${problems.join('; ')}` : 'healthy',
  ].join('\n');
}
