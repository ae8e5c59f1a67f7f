/**
 * The Lineage emulator through the official client: events processed into processes, runs and links, the
 * listings a test or a user reads them back with, validation answers naming the field, request ids, faults.
 */
import type { LineageClient } from '@google-cloud/lineage';
import { type LineageEmulator, startLineageEmulator } from '../../../local/emulators/lineage/emulator';
import { pipelineRunId, runEvent } from '../../../shared/domain/lineage/events';
import { type Json, toStruct } from '../../../shared/domain/lineage/struct';
import { parseTimestamp } from '../../../shared/domain/timestamp';
import { tableOf } from '../../unit/domain/support/table-schemas';

const parent = 'projects/acme-prod/locations/us';
const scope = { pipeline: 'p', project: 'acme-prod', instance: 'inst', database: 'db', dataset: 'ds' };
const at = parseTimestamp('2026-12-01T00:00:00.5Z');
const runId = pipelineRunId(scope, 0, at);
const table = {
  schema: tableOf(
    'Orders',
    ['Id'],
    [
      ['Id', 'INT64'],
      ['Total', 'FLOAT64'],
    ],
  ),
  watched: 'all' as const,
  replica: 'orders',
};

function struct(eventType: 'START' | 'FAIL', id = runId) {
  const e = runEvent(
    scope,
    'pipeline',
    { eventType, at, runId: id, error: eventType === 'FAIL' ? 'x' : undefined },
    [table],
  );
  return toStruct(JSON.parse(JSON.stringify(e)) as { [k: string]: Json });
}

let emulator: LineageEmulator;
let client: LineageClient;
beforeEach(async () => {
  emulator = await startLineageEmulator({ adminPort: 0 });
  client = emulator.client();
});
afterEach(async () => {
  await emulator.stop();
});

describe('Lineage emulator', () => {
  it('turns run events into a process, a run whose state follows them, and lineage events', async () => {
    const [first] = await client.processOpenLineageRunEvent({ parent, openLineage: struct('START') });
    const [processes] = await client.listProcesses({ parent }, { autoPaginate: true });
    expect(processes.map((p) => [p.name, p.displayName])).toEqual([[first.process, 'sluice://acme-prod.p']]);
    const [runs] = await client.listRuns({ parent: first.process! });
    expect(runs.map((r) => [r.name, r.state, r.displayName])).toEqual([[first.run, 'STARTED', runId]]);
    expect(runs[0]?.startTime).toMatchObject({ seconds: String(at / 1_000_000_000n), nanos: 500_000_000 });
    await client.processOpenLineageRunEvent({ parent, openLineage: struct('FAIL') });
    const [after] = await client.listRuns({ parent: first.process! });
    expect(after.map((r) => r.state)).toEqual(['FAILED']);
    const [events] = await client.listLineageEvents({ parent: first.run! });
    expect(events).toHaveLength(2);
    expect(
      events[0]?.links?.map((l) => [l.source?.fullyQualifiedName, l.source?.field, l.target?.field]),
    ).toEqual([
      ['spanner://acme-prod:inst:db.Orders', [], []],
      ['spanner://acme-prod:inst:db.Orders', ['Id'], ['Id']],
      ['spanner://acme-prod:inst:db.Orders', ['Total'], ['Total']],
    ]);
  });

  it('finds links by target, as a lineage graph is walked upstream', async () => {
    await client.processOpenLineageRunEvent({ parent, openLineage: struct('START') });
    const target = { fullyQualifiedName: 'bigquery:acme-prod.ds.orders', field: ['Total'] };
    const links = [];
    for await (const l of client.searchLinksAsync({ parent, target })) links.push(l);
    expect(links.map((l) => l.source?.fullyQualifiedName)).toContain('spanner://acme-prod:inst:db.Orders');
    expect(links).toHaveLength(3);
    expect(emulator.admin.edges()).toEqual([
      { source: 'spanner://acme-prod:inst:db.Orders.Id', target: 'bigquery:acme-prod.ds.orders.Id' },
      { source: 'spanner://acme-prod:inst:db.Orders.Total', target: 'bigquery:acme-prod.ds.orders.Total' },
    ]);
  });

  it('answers INVALID_ARGUMENT naming the bad field', async () => {
    await expect(
      client.processOpenLineageRunEvent({ parent, openLineage: struct('START', 'not-a-uuid') }),
    ).rejects.toMatchObject({ code: 3, details: 'open_lineage.run.runId: must be a UUID' });
    await expect(
      client.processOpenLineageRunEvent({ parent: 'projects/x', openLineage: struct('START') }),
    ).rejects.toMatchObject({ code: 3, details: expect.stringContaining('parent') });
    expect(emulator.admin.events()).toEqual([]);
  });

  it('records a repeated request id once', async () => {
    const requestId = '0b8a7f0e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';
    const [a] = await client.processOpenLineageRunEvent({ parent, openLineage: struct('START'), requestId });
    const [b] = await client.processOpenLineageRunEvent({ parent, openLineage: struct('START'), requestId });
    expect(b).toEqual(a);
    expect(emulator.admin.events()).toHaveLength(1);
  });

  it('injects faults through its admin endpoint; the client retries UNAVAILABLE itself', async () => {
    const rule = { method: 'ProcessOpenLineageRunEvent', times: 1, code: 14 };
    const res = await fetch(`${emulator.adminUrl}/faults`, { method: 'POST', body: JSON.stringify(rule) });
    expect(res.status).toBe(200);
    await client.processOpenLineageRunEvent({ parent, openLineage: struct('START') });
    expect(emulator.admin.faults()[0]?.fired).toBe(1);
    const events = (await (await fetch(`${emulator.adminUrl}/events`)).json()) as unknown[];
    expect(events).toHaveLength(1);
    emulator.admin.fail({ method: 'ProcessOpenLineageRunEvent', times: 1, code: 7, message: 'denied' });
    const err = await client
      .processOpenLineageRunEvent({ parent, openLineage: struct('START') })
      .catch((e) => e);
    expect(err).toMatchObject({ code: 7 });
  });
});
