/**
 * The history sink contract (ADR-1601), run against the in-memory sink and BigQuery on the emulator through
 * the official clients: committed streams with offsets (`ALREADY_EXISTS` / `OUT_OF_RANGE` as answers, rows
 * all or nothing per request), finalize with the row count, a finalized or unknown stream reported
 * unusable, pending streams visible only once committed (twice is once), and the exactly-once append on top
 * of it: a re-sent batch — also one whose requests straddle where an earlier attempt stopped — writes each
 * row once.
 */
import { appendExactlyOnce } from '../../shared/app/sinks/history-append';
import { type HistoryRow, historyRows } from '../../shared/domain/history-rows';
import type { HistorySink } from '../../shared/ports/sinks';
import { at, record } from './sinks.contract';

/** One implementation under test. `chunked` splits every append into requests of about `rowsPerRequest`. */
export interface HistoryHarness {
  history: HistorySink;
  chunked: HistorySink;
  rowsPerRequest: number;
  /** change_ids of the raw table, in any order. */
  changeIds(destination: string): Promise<string[]>;
  close?(): Promise<void>;
}

/** `n` history rows of distinct mods, each with a payload of `pad` characters. */
export function rowsOf(n: number, from = 0, pad = 0): HistoryRow[] {
  return Array.from({ length: n }, (_, i) =>
    historyRows(
      record({
        ts: at(from + i),
        txn: `t${from + i}`,
        modType: 'INSERT',
        mods: [{ keys: { SingerId: String(from + i) }, newValues: { Name: 'x'.repeat(pad) }, oldValues: {} }],
      }),
    ),
  ).flat();
}

const ids = (rows: HistoryRow[]) => rows.map((r) => r.change_id).sort();

/** Registers the contract; `make` builds a fresh harness (fresh dataset) per test. */
export function historyContract(label: string, make: () => Promise<HistoryHarness>): void {
  describe(`History sink contract: ${label}`, () => {
    let h: HistoryHarness;
    beforeEach(async () => {
      h = await make();
      await h.history.ensureTable('history');
    });
    afterEach(async () => {
      await h.close?.();
    });

    it('creates the table once; its schema fingerprint is stable and matches a new stream', async () => {
      await h.history.ensureTable('history');
      const schema = await h.history.tableSchema('history');
      expect(await h.history.tableSchema('history')).toBe(schema);
      const a = await h.history.createStream('history', 'committed');
      const b = await h.history.createStream('history', 'committed');
      expect(a.name).not.toBe(b.name);
      expect(a.name).toMatch(/^projects\/[^/]+\/datasets\/[^/]+\/tables\/history\/streams\/[^/]+$/);
      expect(a.schema).toBe(schema);
    });

    it('adds enriched columns: a new fingerprint, rows carrying them are appended, a second set adds on', async () => {
      const before = await h.history.tableSchema('history');
      await h.history.ensureTable('history', [{ name: 'customer_Name', type: 'STRING', mode: 'NULLABLE' }]);
      const after = await h.history.tableSchema('history');
      expect(after).not.toBe(before);
      await h.history.ensureTable('history', [{ name: 'region_Label', type: 'STRING', mode: 'NULLABLE' }]);
      expect(await h.history.tableSchema('history')).not.toBe(after);
      const stream = await h.history.createStream('history', 'committed');
      const rows = rowsOf(2).map((r, i) => ({ ...r, customer_Name: i === 0 ? 'Ann' : null }));
      expect(await h.history.appendAt('history', stream.name, 0, rows)).toEqual({ kind: 'appended' });
      expect((await h.changeIds('history')).sort()).toEqual(ids(rows));
    });

    it('answers offsets as the service does: already written, beyond the end, appended', async () => {
      const s = await h.history.createStream('history', 'committed');
      const rows = rowsOf(5);
      expect(await h.history.appendAt('history', s.name, 0, rows.slice(0, 3))).toEqual({ kind: 'appended' });
      expect(await h.history.appendAt('history', s.name, 1, rows.slice(1, 4))).toEqual({
        kind: 'already-exists',
        offset: 1,
      });
      expect(await h.history.appendAt('history', s.name, 4, rows.slice(4))).toEqual({
        kind: 'out-of-range',
        offset: 4,
      });
      expect(await h.history.appendAt('history', s.name, 3, rows.slice(3))).toEqual({ kind: 'appended' });
      expect((await h.changeIds('history')).sort()).toEqual(ids(rows));
      expect(await h.history.finalizeStream('history', s.name)).toBe(5);
    });

    it('appends a call larger than one AppendRows request may carry, split into requests, in order', async () => {
      // 26 rows of about 1 MiB: 26 MiB in one call, over the 20 MB a request may carry.
      const s = await h.history.createStream('history', 'committed');
      const rows = rowsOf(26, 0, 1024 * 1024);
      expect(await h.history.appendAt('history', s.name, 0, rows)).toEqual({ kind: 'appended' });
      expect(await h.history.finalizeStream('history', s.name)).toBe(26);
      expect((await h.changeIds('history')).sort()).toEqual(ids(rows));
    }, 60_000);

    it('stops a split append at the first request that meets written rows', async () => {
      const s = await h.chunked.createStream('history', 'committed');
      const n = h.rowsPerRequest * 3;
      const rows = rowsOf(n, 0, 200);
      await h.chunked.appendAt('history', s.name, 0, rows.slice(0, h.rowsPerRequest + 1));
      const out = await h.chunked.appendAt('history', s.name, 0, rows);
      expect(out).toEqual({ kind: 'already-exists', offset: 0 });
      expect(await h.changeIds('history')).toHaveLength(h.rowsPerRequest + 1);
    });

    it('reports a finalized stream and one BigQuery does not know as unusable', async () => {
      const s = await h.history.createStream('history', 'committed');
      await h.history.appendAt('history', s.name, 0, rowsOf(2));
      expect(await h.history.finalizeStream('history', s.name)).toBe(2);
      expect(await h.history.appendAt('history', s.name, 2, rowsOf(1, 2))).toMatchObject({
        kind: 'unusable',
        reason: 'finalized',
      });
      const unknown = s.name.replace(/[^/]+$/, 'nosuchstream');
      expect(await h.history.appendAt('history', unknown, 0, rowsOf(1, 9))).toMatchObject({
        kind: 'unusable',
        reason: 'gone',
      });
      expect(await h.history.finalizeStream('history', unknown)).toBeNull();
      expect(await h.changeIds('history')).toHaveLength(2);
    });

    it('shows a pending stream only once committed; a second commit is a no-op', async () => {
      const s = await h.history.createStream('history', 'pending');
      await h.history.appendAt('history', s.name, 0, rowsOf(3));
      expect(await h.changeIds('history')).toEqual([]);
      expect(await h.history.finalizeStream('history', s.name)).toBe(3);
      expect(await h.history.commitStream('history', s.name)).toBe('committed');
      expect(await h.history.commitStream('history', s.name)).toBe('committed');
      expect(await h.changeIds('history')).toHaveLength(3);
      const unknown = s.name.replace(/[^/]+$/, 'nosuchstream');
      expect(await h.history.commitStream('history', unknown)).toBe('gone');
    });

    it('writes each row once when a batch is re-sent after a partial write, whatever the request split', async () => {
      const s = await h.chunked.createStream('history', 'committed');
      const cursor = { stream: s.name, offset: 0, createdAt: s.createdAt, schema: s.schema };
      const n = h.rowsPerRequest * 4 + 1;
      const rows = rowsOf(n, 0, 200);
      // An earlier attempt got a prefix in that ends inside what is now one request.
      const stopped = h.rowsPerRequest * 2 + Math.ceil(h.rowsPerRequest / 2);
      await h.chunked.appendAt('history', s.name, 0, rows.slice(0, stopped));
      const out = await appendExactlyOnce(h.chunked, 'history', cursor, rows);
      expect(out.cursor.offset).toBe(n);
      expect(out.written + out.skipped).toBe(n);
      expect(out.skipped).toBe(stopped);
      expect(out.probes).toBeGreaterThan(0);
      // And again: everything is there, nothing is written.
      const again = await appendExactlyOnce(h.chunked, 'history', cursor, rows);
      expect(again.written).toBe(0);
      expect((await h.changeIds('history')).sort()).toEqual(ids(rows));
      expect(await h.history.finalizeStream('history', s.name)).toBe(n);
    });

    it('skips the rows a negative offset carries over from a replaced stream', async () => {
      const s = await h.history.createStream('history', 'committed');
      const rows = rowsOf(4);
      const out = await appendExactlyOnce(
        h.history,
        'history',
        { stream: s.name, offset: -2, createdAt: s.createdAt, schema: s.schema },
        rows,
      );
      expect(out).toMatchObject({ written: 2, skipped: 2, cursor: { offset: 2 } });
      expect((await h.changeIds('history')).sort()).toEqual(ids(rows.slice(2)));
    });
  });
}
