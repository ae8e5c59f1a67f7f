/**
 * Rows of the change-stream INFORMATION_SCHEMA views. GoogleSQL column names are upper case, PostgreSQL's
 * lower case. As in the real service, `FOR ALL` streams list no tables and whole tables list no columns.
 * CHANGE_STREAM_OPTIONS lists only options that were set explicitly (a missing row means the default).
 */
import type { SchemaView, WireValue } from '../hooks';
import type { StreamDefinition } from './model';

/** TABLE_SCHEMA and TABLE_NAME of a table: `sch.T` is `sch` and `T`; a plain name is the default schema's. */
function tableParts(name: string, schemaName: string): { TABLE_SCHEMA: string; TABLE_NAME: string } {
  const dot = name.indexOf('.');
  if (dot < 0) return { TABLE_SCHEMA: schemaName, TABLE_NAME: name };
  return { TABLE_SCHEMA: name.slice(0, dot), TABLE_NAME: name.slice(dot + 1) };
}

type Row = Record<string, WireValue>;

const VIEWS = [
  'CHANGE_STREAMS',
  'CHANGE_STREAM_TABLES',
  'CHANGE_STREAM_COLUMNS',
  'CHANGE_STREAM_OPTIONS',
] as const;

/** Normalises `information_schema.change_streams`, `CHANGE_STREAMS`, … to the view's upper-case name. */
export function viewName(view: string): (typeof VIEWS)[number] | undefined {
  const name = view.replace(/"/g, '').split('.').pop()?.trim().toUpperCase() ?? '';
  return (VIEWS as readonly string[]).includes(name) ? (name as (typeof VIEWS)[number]) : undefined;
}

function keyed(row: Row, pg: boolean): Row {
  if (!pg) return row;
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v]));
}

function base(s: StreamDefinition, schemaName: string): Row {
  return { CHANGE_STREAM_CATALOG: '', CHANGE_STREAM_SCHEMA: schemaName, CHANGE_STREAM_NAME: s.name };
}

function tableRows(s: StreamDefinition, schema: SchemaView | undefined, schemaName: string): Row[] {
  if (!s.forClause || s.forClause.all) return [];
  return s.forClause.tables.map((t) => ({
    ...base(s, schemaName),
    TABLE_CATALOG: '',
    ...tableParts(schema?.table(t.table)?.name ?? t.table, schemaName),
    ALL_COLUMNS: t.columns === null,
  }));
}

function columnRows(s: StreamDefinition, schema: SchemaView | undefined, schemaName: string): Row[] {
  if (!s.forClause || s.forClause.all) return [];
  return s.forClause.tables.flatMap((t) =>
    (t.columns ?? []).map((c) => {
      const table = schema?.table(t.table);
      return {
        ...base(s, schemaName),
        TABLE_CATALOG: '',
        ...tableParts(table?.name ?? t.table, schemaName),
        COLUMN_NAME: table?.columns.find((col) => col.name.toLowerCase() === c.toLowerCase())?.name ?? c,
      };
    }),
  );
}

function optionRows(s: StreamDefinition, pg: boolean, schemaName: string): Row[] {
  return Object.entries(s.options)
    .filter(([, v]) => v !== undefined)
    .map(([name, value]) => ({
      ...base(s, schemaName),
      OPTION_NAME: name,
      OPTION_TYPE:
        typeof value === 'boolean' ? (pg ? 'boolean' : 'BOOL') : pg ? 'character varying' : 'STRING',
      OPTION_VALUE: String(value),
    }));
}

/** The rows of `view`, or undefined when it is not a change-stream view. */
export function informationSchemaRows(
  view: string,
  streams: StreamDefinition[],
  dialect: SchemaView['dialect'],
  schema: SchemaView | undefined,
): Row[] | undefined {
  const name = viewName(view);
  if (!name) return undefined;
  const pg = dialect === 'POSTGRESQL';
  const schemaName = pg ? 'public' : '';
  const sorted = [...streams].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const rows = sorted.flatMap((s): Row[] => {
    switch (name) {
      case 'CHANGE_STREAMS':
        return [{ ...base(s, schemaName), ALL: s.forClause?.all === true }];
      case 'CHANGE_STREAM_TABLES':
        return tableRows(s, schema, schemaName);
      case 'CHANGE_STREAM_COLUMNS':
        return columnRows(s, schema, schemaName);
      default:
        return optionRows(s, pg, schemaName);
    }
  });
  return rows.map((r) => keyed(r, pg));
}
