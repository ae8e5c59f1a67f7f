/** The lineage-sink contract, run against the in-memory sink and the Data Lineage API sink on the emulator. */

import { pipelineRunId, runEvent } from '../../shared/domain/lineage/events';
import type { RunEvent } from '../../shared/domain/lineage/open-lineage';
import { addNanos, parseTimestamp } from '../../shared/domain/timestamp';
import type { LineageSink } from '../../shared/ports/lineage-sink';
import { tableOf } from '../unit/domain/support/table-schemas';
import { freshEachTest } from './support/fresh-each-test';

/** A sink under test, what it recorded, and an outage of its service. */
export interface LineageSinkHarness {
  sink: LineageSink;
  received(): Promise<RunEvent[]>;
  down(): Promise<void>;
  up(): Promise<void>;
}

const scope = { pipeline: 'p', project: 'acme-prod', instance: 'inst', database: 'db', dataset: 'ds' };
const at = parseTimestamp('2026-12-01T00:00:00.000000001Z');
const table = {
  schema: tableOf(
    'T',
    ['K'],
    [
      ['K', 'INT64'],
      ['V', 'STRING'],
    ],
  ),
  watched: 'all' as const,
  replica: 't_replica',
};

function event(eventType: RunEvent['eventType'], epoch = 0): RunEvent {
  return runEvent(
    scope,
    'pipeline',
    { eventType, at: addNanos(at, BigInt(epoch)), runId: pipelineRunId(scope, epoch, at) },
    [table],
  );
}

/** Registers the contract tests. */
export function lineageSinkContract(label: string, make: () => Promise<LineageSinkHarness>): void {
  describe(`LineageSink contract: ${label}`, () => {
    const h = freshEachTest(make);

    it('records an event as sent, under a process for the job and a run for the run id', async () => {
      const start = event('START');
      const receipt = await h().sink.send(start);
      expect(receipt.process).toMatch(/processes\/.+/);
      expect(receipt.run.startsWith(`${receipt.process}/runs/`)).toBe(true);
      expect(receipt.lineageEvents).toHaveLength(1);
      expect(await h().received()).toEqual([JSON.parse(JSON.stringify(start))]);
    });

    it('keeps one process per job and one run per run id', async () => {
      const a = await h().sink.send(event('START'));
      const b = await h().sink.send(event('RUNNING'));
      const c = await h().sink.send(event('START', 1));
      expect(b.process).toBe(a.process);
      expect(b.run).toBe(a.run);
      expect(c.process).toBe(a.process);
      expect(c.run).not.toBe(a.run);
    });

    it('an outage is a retryable error, and the event can be sent again', async () => {
      await h().down();
      const start = event('START');
      await expect(h().sink.send(start)).rejects.toMatchObject({ name: 'SluiceError', kind: 'retryable' });
      await h().up();
      await h().sink.send(start);
      expect(await h().received()).toHaveLength(1);
    });
  });
}
