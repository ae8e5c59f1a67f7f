/**
 * The change streams of one database: applies parsed DDL with the service's validation (FAILED_PRECONDITION
 * for schema problems), and renders the canonical DDL for GetDatabaseDdl.
 */
import { Code, type SchemaChange, type SchemaView, SpannerError } from '../hooks';
import type { DdlCommand, OptionValue } from './ddl-parse';
import type { ForClause, StreamDefinition, StreamOptions } from './model';
import { VALUE_CAPTURE_TYPES } from './model';
import { parseDurationNs } from './time';

const DAY_NS = 86_400_000_000_000n;
const BOOL_OPTIONS = [
  'exclude_insert',
  'exclude_update',
  'exclude_delete',
  'exclude_ttl_deletes',
  'allow_txn_exclusion',
] as const;

const fail = (message: string): never => {
  throw new SpannerError(Code.FAILED_PRECONDITION, message);
};

/** Checks a FOR clause against the schema, with the official emulator's messages. */
export function validateFor(name: string, fc: ForClause, schema: SchemaView): void {
  if (fc.all) return;
  const seen = new Set<string>();
  for (const entry of fc.tables) {
    // PostgreSQL's default schema is `public`: `public.t` is the table `t`.
    if (schema.dialect === 'POSTGRESQL' && entry.table.startsWith('public.'))
      entry.table = entry.table.slice('public.'.length);
    const table = schema.table(entry.table);
    if (!table) {
      fail(
        `Change Stream ${name} cannot track ${entry.table} because either Change Streams do not track database objects of this type, or this Table does not exist.`,
      );
      return;
    }
    if (seen.has(table.name))
      fail(`Change Stream ${name} should not list Table ${table.name} more than once in the FOR clause.`);
    seen.add(table.name);
    const cols = new Set<string>();
    for (const column of entry.columns ?? []) {
      const col = table.columns.find((c) => c.name.toLowerCase() === column.toLowerCase());
      if (!col)
        fail(
          `Change Stream ${name} cannot track column ${column} because it does not exist in Table ${table.name}.`,
        );
      else if (table.primaryKey.includes(col.name)) {
        fail(
          `The FOR clause of Change Stream ${name} should not list the primary key column ${col.name} of Table ${table.name}. Please list non-key columns only, because primary key columns are always tracked if the table is tracked.`,
        );
      } else if (col.generated) {
        fail(
          `Change Stream ${name} does not support tracking non-key generated column ${table.name}.${col.name}. Change Streams support tracking Tables and Columns in the default schema (not in INFORMATION_SCHEMA or SPANNER_SYS). Change Streams, Indexes, Queues, Views/Functions and non-key Generated Columns that are not STORED VOLATILE are not supported for tracking.`,
        );
      } else if (cols.has(col.name)) {
        fail(
          `Change Stream ${name} should not list Column ${col.name} of Table ${table.name} more than once in the FOR clause.`,
        );
      } else cols.add(col.name);
    }
  }
}

function applyOption(options: StreamOptions, key: string, value: OptionValue, checkRetention: boolean): void {
  const target = options as Record<string, unknown>;
  if (value === null) {
    delete target[key];
    return;
  }
  if (key === 'retention_period') {
    if (typeof value !== 'string') fail('Option retention_period can only take string_value.');
    const ns = parseDurationNs(String(value));
    if (ns === undefined) fail(`Invalid time duration format: ${value}.`);
    if (checkRetention && ns !== undefined && (ns < DAY_NS || ns > 7n * DAY_NS)) {
      fail(
        `Invalid retention_period: ${value}. Change Streams retention period must be a value in the range [24h, 7d].`,
      );
    }
    options.retention_period = String(value);
  } else if (key === 'value_capture_type') {
    const v = String(value).toUpperCase();
    if (typeof value !== 'string' || !(VALUE_CAPTURE_TYPES as readonly string[]).includes(v)) {
      fail(
        `Invalid value_capture_type: ${value}. Change Streams only support value capture types in OLD_AND_NEW_VALUES, NEW_ROW, NEW_VALUES, and NEW_ROW_AND_OLD_VALUES.`,
      );
    }
    options.value_capture_type = v as StreamOptions['value_capture_type'];
  } else if ((BOOL_OPTIONS as readonly string[]).includes(key)) {
    if (typeof value !== 'boolean') fail(`Option ${key} can only take bool_value.`);
    target[key] = value;
  } else {
    throw new SpannerError(Code.INVALID_ARGUMENT, `Option: ${key} is unknown.`);
  }
}

/** Refuses to drop a table or column a stream lists explicitly in its FOR clause, as the service does. */
export function checkSchemaChange(
  streams: StreamDefinition[],
  change: SchemaChange,
  schema: SchemaView,
): void {
  const table = schema.table(change.table);
  if (!table) return;
  const tracking = streams.filter((s) => {
    const entry =
      s.forClause && !s.forClause.all
        ? s.forClause.tables.find((t) => t.table.toLowerCase() === table.name.toLowerCase())
        : undefined;
    if (!entry) return false;
    if (change.kind === 'dropTable') return true;
    return (entry.columns ?? []).some((c) => c.toLowerCase() === change.column.toLowerCase());
  });
  if (tracking.length === 0) return;
  const names = tracking.map((s) => s.name).join(',');
  if (change.kind === 'dropTable') {
    fail(
      `Cannot drop table ${table.name}. Table ${table.name} is tracked by ${tracking.length} Change Stream: ${names}. Tables explicitly tracked by a Change Stream cannot be dropped. Please drop the Change Stream or modify its FOR clause to stop tracking the table explicitly before dropping the table.`,
    );
    return;
  }
  const wanted = change.column.toLowerCase();
  const column = table.columns.find((c) => c.name.toLowerCase() === wanted)?.name ?? change.column;
  fail(
    `Cannot drop column ${table.name}.${column} . Column ${table.name}.${column} is tracked by ${tracking.length} Change Stream: ${names}. Columns explicitly tracked by a Change Stream cannot be dropped. Please alter the Change Stream to stop tracking the column before dropping the column.`,
  );
}

/** Applies option assignments (NULL resets to the default) to a copy of `base`. */
export function withOptions(
  base: StreamOptions,
  changes: Record<string, OptionValue>,
  checkRetention: boolean,
): StreamOptions {
  const options = { ...base };
  for (const [key, value] of Object.entries(changes)) applyOption(options, key, value, checkRetention);
  return options;
}

/** Applies one command to `streams` (keyed by lower-case name). Returns the created or changed stream. */
export function applyCommand(
  streams: Map<string, StreamDefinition>,
  command: DdlCommand,
  schema: SchemaView,
  nowNs: bigint,
  checkRetention: boolean,
): { created?: StreamDefinition; dropped?: StreamDefinition } {
  const key = command.name.toLowerCase();
  const existing = streams.get(key);
  if (command.kind === 'create') {
    if (existing || schema.table(command.name)) fail(`Duplicate name in schema: ${command.name}.`);
    if (command.forClause) validateFor(command.name, command.forClause, schema);
    const options = withOptions({}, command.options, checkRetention);
    const created = { name: command.name, forClause: command.forClause, options, createdAtNs: nowNs };
    streams.set(key, created);
    return { created };
  }
  if (!existing) throw new SpannerError(Code.NOT_FOUND, `Change Stream not found: ${command.name}`);
  if (command.kind === 'drop') {
    streams.delete(key);
    return { dropped: existing };
  }
  if (command.kind === 'setFor') {
    validateFor(existing.name, command.forClause, schema);
    existing.forClause = command.forClause;
  } else if (command.kind === 'dropFor') {
    if (!existing.forClause) {
      fail(
        `The ALTER CHANGE STREAM DROP FOR clause cannot be applied on Change Stream ${existing.name}, because it does not have a FOR clause and it does not track any database object.`,
      );
    }
    existing.forClause = undefined;
  } else {
    existing.options = withOptions(existing.options, command.options, checkRetention);
  }
  return {};
}

function quoteOption(value: string | boolean): string {
  return typeof value === 'boolean' ? String(value) : `'${value}'`;
}

/** The canonical CREATE statement of a stream, in its dialect. */
export function renderDdl(stream: StreamDefinition, dialect: SchemaView['dialect']): string {
  const pg = dialect === 'POSTGRESQL';
  let text = `CREATE CHANGE STREAM ${stream.name}`;
  const fc = stream.forClause;
  if (fc) {
    const tables = fc.all
      ? 'ALL'
      : fc.tables
          .map((t) => (t.columns === null ? t.table : `${t.table}(${t.columns.join(', ')})`))
          .join(', ');
    text += ` FOR ${tables}`;
  }
  const entries = Object.entries(stream.options).filter(([, v]) => v !== undefined) as Array<
    [string, string | boolean]
  >;
  if (entries.length > 0) {
    const list = entries.map(([k, v]) => `${k} = ${quoteOption(v)}`).join(', ');
    text += pg ? ` WITH (${list})` : ` OPTIONS (${list})`;
  }
  return text;
}
