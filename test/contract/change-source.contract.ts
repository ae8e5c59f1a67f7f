/**
 * The `ChangeSource` contract, run against the in-memory source and against Spanner (emulator, official
 * client), in both dialects: the initial query, inclusive window bounds, the records of a multi-key
 * transaction, heartbeats, a child-partitions record ending a partition, and cancellation.
 */
import type { ChangeRecord, DataChangeRecord, Dialect } from '../../shared/domain/change-record';
import { addNanos, compareTimestamps, type Timestamp } from '../../shared/domain/timestamp';
import type { ChangeQuery, ChangeSource } from '../../shared/ports/change-source';

/** A source plus the means to make changes happen in it. Rows go to one table keyed by a string id. */
export interface ChangeSourceHarness {
  source: ChangeSource;
  /** Name of the table the harness writes. */
  table: string;
  /** Commits one transaction upserting `rows`; returns its commit timestamp. */
  commit(rows: Array<{ id: string; value: string }>): Promise<Timestamp>;
  /** The source's current time. */
  now(): Timestamp;
  /** Ends at least one live partition (its children take over); returns the ended tokens. */
  split(): Promise<string[]>;
  close(): Promise<void>;
}

const HEARTBEAT_MS = 200;

async function collect(
  source: ChangeSource,
  query: Omit<ChangeQuery, 'heartbeatMs'>,
): Promise<ChangeRecord[]> {
  const out: ChangeRecord[] = [];
  for await (const r of source.read({ ...query, heartbeatMs: HEARTBEAT_MS })) out.push(r);
  return out;
}

async function initialTokens(h: ChangeSourceHarness, at: Timestamp): Promise<string[]> {
  const records = await collect(h.source, { partitionToken: null, from: at, to: null });
  return records.flatMap((r) => (r.kind === 'child-partitions' ? r.childPartitions.map((c) => c.token) : []));
}

/** Data-change records of every partition alive at `at`, in the window [from, to]. */
async function dataInWindow(
  h: ChangeSourceHarness,
  at: Timestamp,
  from: Timestamp,
  to: Timestamp,
): Promise<DataChangeRecord[]> {
  const out: DataChangeRecord[] = [];
  for (const token of await initialTokens(h, at)) {
    const records = await collect(h.source, { partitionToken: token, from, to });
    out.push(...records.filter((r): r is DataChangeRecord => r.kind === 'data-change'));
  }
  return out;
}

function keysOf(records: DataChangeRecord[]): string[] {
  return records.flatMap((r) => r.mods.map((m) => String(Object.values(m.keys)[0]))).sort();
}

/** Registers the contract for one implementation; `make(dialect)` builds a fresh harness. */
export function changeSourceContract(
  name: string,
  make: (dialect: Dialect) => Promise<ChangeSourceHarness>,
): void {
  describe.each<Dialect>(['GOOGLE_STANDARD_SQL', 'POSTGRESQL'])(
    `ChangeSource contract: ${name} (%s)`,
    (dialect) => {
      let h: ChangeSourceHarness;
      beforeEach(async () => {
        h = await make(dialect);
      });
      afterEach(async () => {
        await h.close();
      });

      it('answers the initial query with child-partitions records only, without parents', async () => {
        const records = await collect(h.source, { partitionToken: null, from: h.now(), to: null });
        expect(records.length).toBeGreaterThan(0);
        for (const r of records) {
          expect(r.kind).toBe('child-partitions');
          if (r.kind !== 'child-partitions') continue;
          for (const c of r.childPartitions) {
            expect(c.token).not.toBe('');
            expect(c.parentPartitionTokens).toEqual([]);
          }
        }
      });

      it('includes both bounds of a window and nothing outside it', async () => {
        const at = h.now();
        const t1 = await h.commit([{ id: 'a', value: '1' }]);
        const t2 = await h.commit([{ id: 'b', value: '2' }]);
        const t3 = await h.commit([{ id: 'c', value: '3' }]);
        expect(keysOf(await dataInWindow(h, at, t1, t1))).toEqual(['a']);
        expect(keysOf(await dataInWindow(h, at, t2, t3))).toEqual(['b', 'c']);
        expect(keysOf(await dataInWindow(h, at, addNanos(t1, 1), addNanos(t3, -1)))).toEqual(['b']);
      });

      it('returns every mod of a multi-key transaction, with consistent transaction metadata', async () => {
        const at = h.now();
        const ids = ['k1', 'k2', 'k3', 'k4', 'k5', 'k6'];
        const t = await h.commit(ids.map((id) => ({ id, value: `v-${id}` })));
        const records = await dataInWindow(h, at, t, t);
        expect(keysOf(records)).toEqual(ids);
        expect(new Set(records.map((r) => r.serverTransactionId)).size).toBe(1);
        expect(new Set(records.map((r) => r.recordSequence)).size).toBe(records.length);
        for (const r of records) {
          expect(r.commitTimestamp).toBe(t);
          expect(r.tableName).toBe(h.table);
          expect(r.numberOfRecordsInTransaction).toBe(records.length);
        }
      });

      it('sends heartbeats inside a quiet window', async () => {
        const at = h.now();
        const [token] = await initialTokens(h, at);
        await new Promise((r) => setTimeout(r, HEARTBEAT_MS * 2));
        const to = h.now();
        const records = await collect(h.source, { partitionToken: token!, from: at, to });
        expect(records.length).toBeGreaterThan(0);
        for (const r of records) {
          expect(r.kind).toBe('heartbeat');
          if (r.kind !== 'heartbeat') continue;
          expect(compareTimestamps(r.timestamp, at)).toBeGreaterThanOrEqual(0);
          expect(compareTimestamps(r.timestamp, to)).toBeLessThanOrEqual(0);
        }
      });

      it('ends a partition with a child-partitions record naming it as a parent', async () => {
        const at = h.now();
        const before = await initialTokens(h, at);
        const ended = await h.split();
        expect(ended.length).toBeGreaterThan(0);
        const token = ended.find((t) => before.includes(t));
        expect(token).toBeDefined();
        const records = await collect(h.source, { partitionToken: token!, from: at, to: h.now() });
        const last = records.at(-1);
        expect(last?.kind).toBe('child-partitions');
        if (last?.kind !== 'child-partitions') return;
        expect(last.childPartitions.length).toBeGreaterThan(0);
        for (const c of last.childPartitions) expect(c.parentPartitionTokens).toContain(token);
        const child = last.childPartitions[0]!.token;
        const t = await h.commit([{ id: 'after-split', value: 'x' }]);
        expect(keysOf(await dataInWindow(h, t, t, t))).toEqual(['after-split']);
        expect(child).not.toBe(token);
      });

      it('stops cleanly when the signal aborts mid-stream', async () => {
        const at = h.now();
        let last = at;
        for (let i = 0; i < 12; i++)
          last = await h.commit([{ id: `m${String(i).padStart(2, '0')}`, value: 'v' }]);
        const tokens = await initialTokens(h, at);
        const counts = await Promise.all(
          tokens.map(
            async (token) => (await collect(h.source, { partitionToken: token, from: at, to: last })).length,
          ),
        );
        const busiest = tokens[counts.indexOf(Math.max(...counts))]!;
        const controller = new AbortController();
        const seen: ChangeRecord[] = [];
        for await (const r of h.source.read(
          { partitionToken: busiest, from: at, to: last, heartbeatMs: HEARTBEAT_MS },
          controller.signal,
        )) {
          seen.push(r);
          if (seen.length === 2) controller.abort();
        }
        expect(seen.length).toBe(2);
        expect(Math.max(...counts)).toBeGreaterThan(2);
        const aborted = new AbortController();
        aborted.abort();
        const none: ChangeRecord[] = [];
        for await (const r of h.source.read(
          { partitionToken: busiest, from: at, to: last, heartbeatMs: 200 },
          aborted.signal,
        ))
          none.push(r);
        expect(none).toEqual([]);
      });
    },
  );
}
