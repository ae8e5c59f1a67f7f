/**
 * The contract of the writer's two ports — `WriterCatalogSource` and `MutationSink` — run against the
 * in-memory implementations and against the Spanner emulator through the official client. The schema is
 * `Accounts (Id INT64 NOT NULL, Name STRING NOT NULL, Balance FLOAT64)` keyed by Id, with one secondary
 * index on Name, in the backend's dialect.
 */
import { GrpcCode } from '../../shared/domain/errors';
import { findTable } from '../../shared/domain/writer/catalog';
import { type TypedMutation, typeMutations } from '../../shared/domain/writer/mutations';
import { isConstraintViolation } from '../../shared/domain/writer/policy';
import type { MutationInput } from '../../shared/domain/writer/request';
import type { MutationSink } from '../../shared/ports/mutation-sink';
import type { WriterCatalogSource } from '../../shared/ports/writer-catalog';

/** A mutation without its position (each call numbers its own). */
type Unindexed = MutationInput extends infer T ? (T extends MutationInput ? Omit<T, 'index'> : never) : never;

/** A fresh, empty backend. */
export interface SinkBackend {
  sink: MutationSink;
  catalog: WriterCatalogSource;
  /** The table's name in the backend's dialect (`Accounts` or `accounts`). */
  table: string;
  /** Column names in the backend's dialect. */
  columns: { id: string; name: string; balance: string };
}

/** Runs the contract. */
export function mutationSinkContract(name: string, fresh: () => Promise<SinkBackend>): void {
  describe(`writer ports contract: ${name}`, () => {
    let b: SinkBackend;
    let seq = 0;

    beforeEach(async () => {
      b = await fresh();
    });

    async function typed(...ms: Unindexed[]): Promise<TypedMutation[]> {
      const r = typeMutations(
        await b.catalog.read(),
        ms.map((m, index) => ({ ...m, index }) as MutationInput),
      );
      if (!r.ok) throw new Error(r.problems.join('\n'));
      return r.value;
    }
    const row = (id: number, name: string | null, balance?: number) => ({
      [b.columns.id]: id,
      [b.columns.name]: name,
      ...(balance === undefined ? {} : { [b.columns.balance]: balance }),
    });
    const write = async (...ms: Unindexed[]) =>
      b.sink.batchWrite(await typed(...ms), { timeoutMs: 30_000, tag: `contract-${++seq}` });
    const codes = (r: Awaited<ReturnType<typeof write>>) =>
      [...r.reports].sort((x, y) => x.position - y.position).map((x) => x.status.code);

    test('the catalog: the table, its key, the index count of each column', async () => {
      const c = await b.catalog.read();
      const t = findTable(c, b.table);
      expect(t?.primaryKey).toEqual([b.columns.id]);
      expect(t?.indexes).toBe(1);
      expect(t?.columns.map((x) => [x.name, x.type?.code, x.nullable, x.indexes])).toEqual([
        [b.columns.id, 'INT64', false, 0],
        [b.columns.name, 'STRING', false, 1],
        [b.columns.balance, 'FLOAT64', true, 0],
      ]);
    });

    test('one status per mutation, each group applied on its own; applied groups carry a commit timestamp', async () => {
      const r = await write(
        { op: 'insert', table: b.table, row: row(1, 'a', 1.5) },
        { op: 'insert', table: b.table, row: row(1, 'again') },
        { op: 'insert', table: b.table, row: row(2, 'b') },
      );
      expect(r.callError).toBeUndefined();
      expect(codes(r)).toEqual([GrpcCode.OK, GrpcCode.ALREADY_EXISTS, GrpcCode.OK]);
      const applied = r.reports.filter((x) => x.status.code === GrpcCode.OK);
      expect(applied.every((x) => typeof x.commitTimestamp === 'bigint')).toBe(true);
    });

    test('the operations: update needs the row, insertOrUpdate and replace and delete are idempotent', async () => {
      const first = await write(
        { op: 'update', table: b.table, row: row(5, 'x') },
        { op: 'insertOrUpdate', table: b.table, row: row(5, 'x') },
        { op: 'insertOrUpdate', table: b.table, row: row(5, 'y', 2) },
        { op: 'replace', table: b.table, row: row(6, 'z') },
        { op: 'delete', table: b.table, key: [7] },
      );
      expect(codes(first)).toEqual([GrpcCode.NOT_FOUND, 0, 0, 0, 0]);
      const again = await write(
        { op: 'update', table: b.table, row: { [b.columns.id]: 5, [b.columns.balance]: 3 } },
        { op: 'replace', table: b.table, row: row(6, 'z') },
        { op: 'delete', table: b.table, key: [6] },
        { op: 'delete', table: b.table, key: [6] },
      );
      expect(codes(again)).toEqual([0, 0, 0, 0]);
    });

    test('NOT NULL violations are FAILED_PRECONDITION with a message the failure policy recognises', async () => {
      const r = await write(
        { op: 'insert', table: b.table, row: row(10, null) },
        { op: 'insert', table: b.table, row: { [b.columns.id]: 11 } },
        { op: 'insert', table: b.table, row: row(12, 'ok') },
      );
      expect(codes(r)).toEqual([GrpcCode.FAILED_PRECONDITION, GrpcCode.FAILED_PRECONDITION, GrpcCode.OK]);
      for (const report of r.reports.filter((x) => x.status.code !== 0))
        expect(isConstraintViolation(report.status)).toBe(true);
    });
  });
}
