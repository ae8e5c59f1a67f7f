/**
 * What `partitions retry` and `dead-letters list | replay | discard` print for a person (`--json` prints the answer as
 * it is): a table of letters, one line per outcome, and whether the command did what it was asked — a replay
 * in which a letter failed is not a success (exit 1).
 */

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

/** Columns padded to their widest cell. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** `GET /dead-letters` as a table, with the counts and the next page token. */
export function formatDeadLetters(body: unknown): string {
  const b = obj(body);
  const items = list(b.items);
  const rows = items.map((i) =>
    [
      i.id,
      i.state,
      i.table,
      i.key,
      i.column,
      i.commitTimestamp,
      i.records,
      i.reason,
      // A writer letter comes from a request or a Pub/Sub message (ADR-2203); a stream letter from a partition.
      i.source === 'writer' ? `writer ${String(i.origin)}` : i.partition,
      i.updated,
    ].map((v) => (v === undefined || v === null ? '-' : String(v))),
  );
  const counts = obj(b.counts);
  const writer = obj(counts.writer);
  const discarded = Number(counts.discarded ?? 0) + Number(writer.discarded ?? 0);
  const lines = [
    items.length > 0
      ? table(
          [
            'id',
            'state',
            'table',
            'key',
            'column',
            'commit timestamp',
            'records',
            'reason',
            'source',
            'updated',
          ],
          rows,
        )
      : 'no dead letters',
    ...items
      .filter((i) => i.state === 'discarded')
      .map(
        (i) =>
          `discarded ${String(i.id)} by ${String(i.discardedBy)} at ${String(i.discardedAt)}${i.discardReason ? `: ${String(i.discardReason)}` : ''}`,
      ),
    `pending ${String(counts.pending ?? 0)} (${String(counts.pendingRecords ?? 0)} records` +
      `${Number(writer.pending ?? 0) > 0 ? `, writer ${String(writer.pending)}` : ''}), replayed ${String(counts.replayed ?? 0)}, discarded ${discarded}`,
  ];
  if (items.some((i) => i.source === 'writer'))
    lines.push(
      'writer letters (source writer …) hold Spanner mutations: not replayable into BigQuery; post them to the writer again if still wanted, then discard them',
    );
  if (b.nextPageToken) lines.push(`more: --page-token ${String(b.nextPageToken)}`);
  return lines.join('\n');
}

/** `POST /dead-letters/replay`: one line per letter, then the totals. */
export function formatReplay(body: unknown): string {
  const b = obj(body);
  const lines = list(b.results).map(
    (r) =>
      `${String(r.outcome).padEnd(16)} ${String(r.id)}${r.rows !== undefined ? `  ${String(r.rows)} rows` : ''}${r.error ? `  ${String(r.error)}` : ''}`,
  );
  lines.push(
    `replayed ${String(b.replayed ?? 0)}, failed ${String(b.failed ?? 0)}, untrusted ${String(b.untrusted ?? 0)}, already replayed ${String(b.alreadyReplayed ?? 0)}` +
      (Number(b.discarded ?? 0) > 0 ? `, discarded (not replayed) ${String(b.discarded)}` : '') +
      (b.more ? '; more pending: run again' : ''),
  );
  return lines.join('\n');
}

/** Whether a replay did what it was asked: no letter failed, was not found, was refused as untrusted or was discarded. */
export function replaySucceeded(body: unknown): boolean {
  const b = obj(body);
  if (Number(b.failed ?? 0) > 0 || Number(b.untrusted ?? 0) > 0) return false;
  const bad = ['failed', 'not-found', 'untrusted', 'discarded'];
  return !list(b.results).some((r) => bad.includes(String(r.outcome)));
}

/** `POST /dead-letters/discard`: one line per letter, then the totals and who discarded them. */
export function formatDiscard(body: unknown): string {
  const b = obj(body);
  const lines = list(b.results).map(
    (r) => `${String(r.outcome).padEnd(17)} ${String(r.id)}${r.source === 'writer' ? '  (writer)' : ''}`,
  );
  lines.push(
    `discarded ${String(b.discarded ?? 0)}, already discarded ${String(b.alreadyDiscarded ?? 0)}, by ${String(b.by ?? '?')}`,
  );
  return lines.join('\n');
}

/** `POST /partitions/retry`: which partitions were retried, which were skipped and why. */
export function formatRetry(body: unknown): string {
  const b = obj(body);
  const retried = Array.isArray(b.retried) ? b.retried.map(String) : [];
  const lines = retried.map((id) => `retried  ${id}`);
  for (const s of list(b.skipped))
    lines.push(`skipped  ${String(s.partition)}  ${String(s.state)}: ${String(s.reason)}`);
  lines.push(`${retried.length} partition(s) retried; the next tick enqueues them`);
  return lines.join('\n');
}
