/**
 * The CLI's commands, each one call (or a polling loop) on the operator function's routes: status,
 * backfills, failed partitions, dead letters and forgotten tables. Output goes through `io` so tests capture it.
 */
import { formatDeadLetters, formatDiscard, formatReplay, formatRetry, replaySucceeded } from './failure-view';
import { formatJob, formatJobTables, formatProgress } from './format';
import type { OperatorClient } from './operator-client';
import { formatStatus, statusProblems } from './status-view';

/** Where a command writes, and whether it may redraw a line (a terminal). */
export interface CommandIO {
  out(line: string): void;
  /** Redraws the current line (progress); absent when the output is not a terminal. */
  progress?(line: string): void;
}

/** Parsed arguments of one command. */
export interface Invocation {
  command: string[];
  positional: string[];
  flags: Record<string, string | true>;
}

type Json = Record<string, unknown>;

/** `status`'s exit code when something is wrong (documented in the usage text). */
export const EXIT_UNHEALTHY = 3;

function print(io: CommandIO, flags: Invocation['flags'], body: unknown, text: () => string): void {
  io.out(flags.json ? JSON.stringify(body, null, 2) : text());
}

async function status(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  const { body } = await client.call('GET', '/status');
  print(io, inv.flags, body, () => formatStatus(body));
  return statusProblems(body).length > 0 ? EXIT_UNHEALTHY : 0;
}

function backfillRequest(inv: Invocation): Json {
  const f = inv.flags;
  return {
    tables: inv.positional,
    ...(typeof f.targets === 'string' ? { targets: f.targets.split(',') } : {}),
    ...(typeof f.priority === 'string' ? { priority: f.priority } : {}),
    ...(typeof f.readTimestamp === 'string' ? { readTimestamp: f.readTimestamp } : {}),
    ...(f.dataBoost ? { dataBoost: true } : {}),
    ...(typeof f.maxPartitions === 'string' ? { maxPartitions: Number(f.maxPartitions) } : {}),
  };
}

/**
 * Polls a job until it ends, drawing progress; exit 0 only when it succeeded. With `--json` nothing but the
 * ended job's JSON is printed, so the output parses.
 */
async function waitFor(
  client: OperatorClient,
  id: string,
  io: CommandIO,
  options: { intervalMs: number; json: boolean },
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const { body } = await client.call('GET', `/backfills/${encodeURIComponent(id)}`);
    const job = body as Json;
    const seconds = Math.max(0.001, (Date.now() - started) / 1000);
    const line = formatProgress(job, Number(job.rowsWritten ?? 0) / seconds);
    const ended = ['succeeded', 'failed', 'cancelled'].includes(String(job.state));
    if (options.json) {
      if (ended) io.out(JSON.stringify(job, null, 2));
    } else {
      if (io.progress) io.progress(line);
      if (!io.progress && ended) io.out(line);
      if (ended) {
        if (io.progress) io.out('');
        io.out(`${formatJob(job)}\n${formatJobTables(job)}`);
      }
    }
    if (ended) return job.state === 'succeeded' ? 0 : 1;
    await new Promise((r) => setTimeout(r, options.intervalMs));
  }
}

async function backfill(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  const [sub] = inv.command.slice(1);
  const id = inv.positional[0];
  if (sub === 'start') {
    if (inv.positional.length === 0) throw new UsageProblem('backfill start needs at least one table');
    const { body } = await client.call('POST', '/backfills', backfillRequest(inv));
    const job = body as Json;
    if (!inv.flags.wait) {
      print(
        io,
        inv.flags,
        body,
        () =>
          `started backfill ${String(job.id)} at ${String(job.snapshotTimestamp)} (${String(job.partitions)} partitions)`,
      );
      return 0;
    }
    if (!inv.flags.json)
      io.out(
        `backfill ${String(job.id)} at ${String(job.snapshotTimestamp)}: ${String(job.partitions)} partitions`,
      );
    const intervalMs = Number(inv.flags.interval ?? 1000);
    return waitFor(client, String(job.id), io, { intervalMs, json: inv.flags.json === true });
  }
  if (sub === 'list') {
    const jobs = await allBackfills(client, inv.flags.pageSize);
    const body = { backfills: jobs };
    print(io, inv.flags, body, () => (jobs.length ? jobs.map(formatJob).join('\n') : 'no backfills'));
    return 0;
  }
  if ((sub === 'show' || sub === 'cancel') && id) {
    const method = sub === 'show' ? 'GET' : 'DELETE';
    const { body } = await client.call(method, `/backfills/${encodeURIComponent(id)}`);
    print(io, inv.flags, body, () =>
      sub === 'show' ? `${formatJob(body)}\n${formatJobTables(body)}` : formatJob(body),
    );
    return 0;
  }
  throw new UsageProblem('backfill start <tables…> [--wait] | list | show <id> | cancel <id>');
}

/** Every job, newest first, following `nextPageToken` page by page (ADR-2308). */
async function allBackfills(client: OperatorClient, pageSize: unknown): Promise<unknown[]> {
  const jobs: unknown[] = [];
  let token: string | undefined;
  do {
    const params = new URLSearchParams();
    if (typeof pageSize === 'string') params.set('pageSize', pageSize);
    if (token) params.set('pageToken', token);
    const { body } = await client.call('GET', `/backfills${params.size > 0 ? `?${params}` : ''}`);
    jobs.push(...(((body as Json).backfills as unknown[]) ?? []));
    const next = (body as Json).nextPageToken;
    token = typeof next === 'string' ? next : undefined;
  } while (token);
  return jobs;
}

async function partitions(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  if (inv.command[1] !== 'retry') throw new UsageProblem('partitions retry [--partition <id>]');
  const partition = inv.flags.partition;
  const query = typeof partition === 'string' ? `?partition=${encodeURIComponent(partition)}` : '';
  const { body } = await client.call('POST', `/partitions/retry${query}`);
  print(io, inv.flags, body, () => formatRetry(body));
  return 0;
}

async function deadLetters(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  const sub = inv.command[1];
  if (sub === 'list') {
    const params = new URLSearchParams();
    for (const key of ['pageToken', 'pageSize', 'table']) {
      const v = inv.flags[key];
      if (typeof v === 'string') params.set(key, v);
    }
    // Pending letters are what needs a decision; --all shows the replayed and discarded ones too (ADR-2202).
    if (!inv.flags.all) params.set('state', 'pending');
    const query = params.size > 0 ? `?${params}` : '';
    const { body } = await client.call('GET', `/dead-letters${query}`);
    print(io, inv.flags, body, () => formatDeadLetters(body));
    return 0;
  }
  if (sub === 'replay') {
    const ids = inv.positional;
    // "Replay all" follows the answer's `next` until no letter is left (ADR-2112); each page is printed, and
    // the exit code says whether every letter of every page was replayed.
    let request: Record<string, unknown> = ids.length ? { ids } : {};
    let ok = true;
    for (;;) {
      const { body } = await client.call('POST', '/dead-letters/replay', request);
      print(io, inv.flags, body, () => formatReplay(body));
      ok = replaySucceeded(body) && ok;
      const next = (body as { next?: unknown }).next;
      if (ids.length || typeof next !== 'string') return ok ? 0 : 1;
      request = { after: next };
    }
  }
  if (sub === 'discard') return discard(client, inv, io);
  throw new UsageProblem(
    'dead-letters list [--table <t>] [--all] [--page-token <t>] | replay [<id>…] | discard <id…> | --table <t> [--reason <text>]',
  );
}

/** `dead-letters discard`: the ids named, or every pending letter of `--table` (page after page). */
async function discard(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  const ids = inv.positional;
  const table = typeof inv.flags.table === 'string' ? inv.flags.table : undefined;
  if (ids.length > 0 === (table !== undefined))
    throw new UsageProblem('dead-letters discard <id…> | --table <t> [--reason <text>]: give ids or --table');
  const reason = typeof inv.flags.reason === 'string' ? { reason: inv.flags.reason } : {};
  const request = { ...(table ? { table } : { ids }), ...reason };
  for (;;) {
    const { body } = await client.call('POST', '/dead-letters/discard', request);
    print(io, inv.flags, body, () => formatDiscard(body));
    if (!(body as { more?: unknown }).more) return 0;
  }
}

async function tables(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  const [table, ...extra] = inv.positional;
  if (inv.command[1] !== 'forget' || !table || extra.length > 0)
    throw new UsageProblem('tables forget <table> [--targets replica,history]');
  const targets = typeof inv.flags.targets === 'string' ? { targets: inv.flags.targets.split(',') } : {};
  const { body } = await client.call('POST', '/tables/forget', { table, ...targets });
  const out = body as {
    forgotten?: Array<{ target: string; destination: string; before: string }>;
    next?: string;
  };
  print(io, inv.flags, body, () =>
    [
      ...(out.forgotten ?? []).map((f) => `forgot ${f.target} ${f.destination} (was ${f.before})`),
      ...(out.next ? [`next: ${out.next}`] : []),
    ].join('\n'),
  );
  return 0;
}

/** A command line that cannot be run; the message says what is accepted. */
export class UsageProblem extends Error {}

/** Runs one parsed command; resolves the exit code. */
export async function runCommand(client: OperatorClient, inv: Invocation, io: CommandIO): Promise<number> {
  switch (inv.command[0]) {
    case 'status':
      return status(client, inv, io);
    case 'backfill':
      return backfill(client, inv, io);
    case 'partitions':
      return partitions(client, inv, io);
    case 'dead-letters':
      return deadLetters(client, inv, io);
    case 'tables':
      return tables(client, inv, io);
    default:
      throw new UsageProblem(`unknown command ${JSON.stringify(inv.command.join(' '))}`);
  }
}
