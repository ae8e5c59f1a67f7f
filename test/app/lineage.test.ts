/**
 * Lineage from the use cases: the reporter's log line, outbox and retries; the scheduler's START, RUNNING
 * heartbeats, FAIL and ABORT; and a backfill's START, COMPLETE, FAIL and ABORT — every event checked against
 * the OpenLineage run-event schema. A lineage outage never fails a tick or a backfill.
 */
import { MemoryLineageSink } from '../../shared/adapters/memory/lineage-sink';
import { cancelBackfill, runPartition, startBackfill } from '../../shared/app/backfill';
import { BackfillLineage } from '../../shared/app/lineage/backfill';
import { PipelineLineage } from '../../shared/app/lineage/pipeline';
import { LineageReporter } from '../../shared/app/lineage/reporter';
import { Scheduler } from '../../shared/app/replication/scheduler/scheduler';
import { parsePartitionTask } from '../../shared/domain/backfill/job';
import { SluiceError } from '../../shared/domain/errors';
import { pipelineRunId, runEvent } from '../../shared/domain/lineage/events';
import type { RunEvent } from '../../shared/domain/lineage/open-lineage';
import { createLogger } from '../../shared/domain/log';
import { fromNanos } from '../../shared/domain/timestamp';
import { runEventProblems } from '../unit/domain/lineage/open-lineage-schema';
import { harness as backfillHarness, seedOrders } from './backfill/support';
import { Harness } from './support/harness';

function lineageOf(h: Harness, sink: MemoryLineageSink, heartbeatMs = 60_000) {
  const log = h.runtime().log;
  const reporter = new LineageReporter({ sink, log });
  const lineage = new PipelineLineage({
    reporter,
    config: h.settings.config,
    catalog: h.catalog,
    heartbeatMs,
    log,
  });
  return { reporter, tick: () => new Scheduler({ ...h.ports(), lineage }, h.settings, h.runtime()).tick() };
}

/**
 * Starts the pipeline on a stream keeping one hour of changes, then lets an hour and two minutes pass:
 * the tick after that (already run here) finds the position older than the retention. Returns the tick.
 */
async function outrunRetention(h: Harness, sink: MemoryLineageSink) {
  h.catalog.options = { ...h.catalog.options, retentionSeconds: 3_600 };
  const { tick } = lineageOf(h, sink);
  await tick();
  h.queue.drain();
  h.advance(3_700_000);
  await tick();
  return tick;
}

const types = (events: RunEvent[]) => events.map((e) => e.eventType);

describe('LineageReporter', () => {
  const scope = { pipeline: 'p', project: 'acme-prod', instance: 'i', database: 'd', dataset: 's' };
  const runId = pipelineRunId(scope, 0, fromNanos(0n));
  const event = (n: number) =>
    runEvent(scope, 'pipeline', { eventType: 'RUNNING', at: fromNanos(BigInt(n)), runId }, []);

  function setup(maxPending?: number) {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new MemoryLineageSink();
    const log = createLogger((l) => lines.push(JSON.parse(l)));
    const reporter = new LineageReporter({ sink, log, ...(maxPending ? { maxPending } : {}) });
    return { lines, sink, reporter, messages: () => lines.map((l) => l.message) };
  }

  it('logs every event as one structured line carrying the whole event', async () => {
    const { lines, reporter, sink } = setup();
    await reporter.emit(event(1));
    expect(lines[0]).toMatchObject({ severity: 'INFO', message: 'lineage.event', eventType: 'RUNNING' });
    expect(lines[0]?.openLineage).toEqual(JSON.parse(JSON.stringify(event(1))));
    expect(sink.events).toHaveLength(1);
  });

  it('keeps events through an outage and sends them later in order', async () => {
    const { reporter, sink, messages } = setup();
    sink.failNext(Number.POSITIVE_INFINITY);
    await reporter.emit(event(1));
    await reporter.emit(event(2));
    expect(reporter.stats()).toMatchObject({ sent: 0, pending: 2, failures: 2, dropped: 0 });
    expect(messages().filter((m) => m === 'lineage.failed')).toHaveLength(2);
    sink.recover();
    await reporter.flush();
    expect(sink.events.map((e) => e.eventTime)).toEqual([event(1).eventTime, event(2).eventTime]);
    expect(reporter.stats()).toMatchObject({ sent: 2, pending: 0 });
  });

  it('drops a permanently refused event at ERROR and goes on with the next', async () => {
    const { reporter, sink, lines } = setup();
    sink.failNext(1, new SluiceError('permanent', 'PERMISSION_DENIED: datalineage.events.create'));
    await reporter.emit(event(1));
    await reporter.emit(event(2));
    expect(sink.events).toHaveLength(1);
    expect(reporter.stats()).toMatchObject({
      sent: 1,
      dropped: 1,
      lastError: expect.stringContaining('DENIED'),
    });
    expect(lines.find((l) => l.message === 'lineage.refused')).toMatchObject({ severity: 'ERROR' });
  });

  it('bounds the outbox, dropping the oldest loudly', async () => {
    const { reporter, sink, lines } = setup(2);
    sink.failNext(Number.POSITIVE_INFINITY);
    for (let i = 1; i <= 3; i++) await reporter.emit(event(i));
    expect(reporter.stats()).toMatchObject({ pending: 2, dropped: 1 });
    expect(lines.filter((l) => l.message === 'lineage.dropped')).toHaveLength(1);
  });
});

describe('pipeline lineage from the scheduler', () => {
  it('START when the ledger starts, RUNNING heartbeats when due, every event schema-valid', async () => {
    const h = new Harness();
    const sink = new MemoryLineageSink();
    const { tick } = lineageOf(h, sink, 60_000);
    await tick();
    expect(types(sink.events)).toEqual(['START']);
    const start = sink.events[0]!;
    expect(runEventProblems(start)).toEqual([]);
    // In the order of the status's table list.
    expect(start.inputs.map((i) => `${i.namespace}/${i.name}`)).toEqual([
      'spanner://test-project:inst/db.Items',
      'spanner://test-project:inst/db.Orders',
    ]);
    expect(start.outputs.map((o) => o.name)).toEqual([
      'test-project.ds.items',
      'test-project.ds.orders',
      'test-project.ds.orders_history',
    ]);
    h.advance(30_000);
    await tick();
    expect(types(sink.events)).toEqual(['START']);
    h.advance(30_000);
    await tick();
    expect(types(sink.events)).toEqual(['START', 'RUNNING']);
    expect(sink.events[1]?.run.runId).toBe(start.run.runId);
  });

  it('a fresh instance finding the pipeline running sends a heartbeat at once', async () => {
    const h = new Harness();
    await h.tick();
    const sink = new MemoryLineageSink();
    await lineageOf(h, sink).tick();
    expect(types(sink.events)).toEqual(['RUNNING']);
  });

  it('FAIL with the reason when the retention guard stops the pipeline', async () => {
    const h = new Harness();
    const sink = new MemoryLineageSink();
    const tick = await outrunRetention(h, sink);
    expect(types(sink.events)).toEqual(['START', 'FAIL']);
    expect(sink.events[1]?.run.facets?.errorMessage?.message).toMatch(/older than the stream's retention/);
    expect(runEventProblems(sink.events[1])).toEqual([]);
    await tick();
    expect(types(sink.events)).toEqual(['START', 'FAIL']);
  });

  it('a restart at a new epoch aborts the old run and starts a new one', async () => {
    const h = new Harness({ config: { retentionFallback: 'restart' } });
    const sink = new MemoryLineageSink();
    await outrunRetention(h, sink);
    expect(types(sink.events)).toEqual(['START', 'ABORT', 'START']);
    expect(sink.events[1]?.run.runId).toBe(sink.events[0]?.run.runId);
    expect(sink.events[2]?.run.runId).not.toBe(sink.events[0]?.run.runId);
  });

  it('a lineage outage does not fail the tick; the START arrives once the service is back', async () => {
    const h = new Harness();
    const sink = new MemoryLineageSink();
    sink.failNext(Number.POSITIVE_INFINITY);
    const { tick, reporter } = lineageOf(h, sink);
    const report = await tick();
    expect(report.status?.state).toBe('running');
    expect(report.enqueued).toBeGreaterThan(0);
    expect(reporter.stats().pending).toBe(1);
    expect(h.events('lineage.failed')).toHaveLength(1);
    sink.recover();
    await tick();
    expect(types(sink.events)).toEqual(['START']);
  });
});

describe('backfill lineage', () => {
  function setup() {
    const b = backfillHarness();
    const sink = new MemoryLineageSink();
    const reporter = new LineageReporter({ sink, log: b.deps.log });
    const config = {
      ...b.deps.config,
      project: 'acme-prod',
      bigquery: { dataset: 'ds' },
    };
    b.deps.lineage = new BackfillLineage(reporter, config);
    return { b, sink };
  }

  async function run(b: ReturnType<typeof backfillHarness>) {
    for (const task of b.queue.drain()) await runPartition(b.deps, parsePartitionTask(task.body));
  }

  it('START when the job starts, COMPLETE when its last partition is done', async () => {
    const { b, sink } = setup();
    seedOrders(b, 5);
    const started = await startBackfill(b.deps, { tables: ['Orders', 'Items'] });
    if (!started.ok) throw new Error(started.problems.join());
    expect(types(sink.events)).toEqual(['START']);
    await run(b);
    expect(types(sink.events)).toEqual(['START', 'COMPLETE']);
    for (const e of sink.events) expect(runEventProblems(e)).toEqual([]);
    const [start, complete] = sink.events;
    expect(complete?.run.runId).toBe(start?.run.runId);
    expect(start?.job).toMatchObject({ namespace: 'sluice://acme-prod', name: 'demo.backfill' });
    expect(start?.inputs.map((i) => i.name)).toEqual(['shop.Orders', 'shop.Items']);
    const replica = start?.outputs.find((o) => o.name === 'acme-prod.ds.orders');
    // Only the columns the backfill reads (the watched ones and the key) have lineage.
    expect(Object.keys(replica?.facets?.columnLineage?.fields ?? {})).toEqual([
      'OrderId',
      'Customer',
      'Amount',
    ]);
  });

  it('ABORT when an operator cancels the job', async () => {
    const { b, sink } = setup();
    seedOrders(b, 2);
    const started = await startBackfill(b.deps, { tables: ['Orders'] });
    if (!started.ok) throw new Error(started.problems.join());
    await cancelBackfill(b.deps, started.value.id);
    expect(types(sink.events)).toEqual(['START', 'ABORT']);
  });

  it('FAIL with the error when a partition fails permanently', async () => {
    const { b, sink } = setup();
    seedOrders(b, 2);
    const started = await startBackfill(b.deps, { tables: ['Orders'] });
    if (!started.ok) throw new Error(started.problems.join());
    b.replica.failNext = Array.from({ length: 5 }, () => new SluiceError('permanent', 'table dropped'));
    await run(b);
    expect(types(sink.events)).toEqual(['START', 'FAIL']);
    expect(sink.events[1]?.run.facets?.errorMessage?.message).toMatch(/table dropped/);
  });
});
