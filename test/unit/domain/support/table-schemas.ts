/** Table schemas as the catalog reads them, written as a name, a key and typed columns. */
import type { TableSchema } from '../../../../shared/domain/information-schema';

/** A column: its name, its type code, and `NOT NULL` for a non-key column that is never NULL. */
export type PlainColumn = [name: string, code: string, notNull?: 'NOT NULL'];

/** Columns of plain type codes, numbered in the order given; key columns are never NULL. */
export function tableOf(name: string, primaryKey: string[], columns: PlainColumn[]): TableSchema {
  return {
    name,
    primaryKey,
    columns: columns.map(([column, code, notNull], i) => ({
      name: column,
      type: { code },
      nullable: !(notNull || primaryKey.includes(column)),
      ordinalPosition: i + 1,
    })),
  };
}
