/**
 * Names in named schemas. A table, index or change stream of a named schema is known by its qualified name
 * `sch.T` — as the official emulator names it (`Table::Name()` is `mynamedschema.T`), in change records'
 * `table_name` too — and INFORMATION_SCHEMA splits it into TABLE_SCHEMA `sch` and TABLE_NAME `T`. The default
 * schema is '' in GoogleSQL and `public` in PostgreSQL, whose `public.t` is the plain `t`.
 */
import { Code, SpannerError } from './hooks';
import { type Dialect, identName, isOp, type Token } from './tokenizer';

/** The default schema's name in INFORMATION_SCHEMA. */
export function defaultSchema(d: Dialect): string {
  return d === 'POSTGRESQL' ? 'public' : '';
}

/** `[schema, name in the schema]` of a possibly qualified name; the schema is '' for the default one. */
export function splitName(name: string): [string, string] {
  const dot = name.indexOf('.');
  return dot < 0 ? ['', name] : [name.slice(0, dot), name.slice(dot + 1)];
}

/** The schema part of a qualified name, or undefined for a name of the default schema. */
export function schemaOf(name: string): string | undefined {
  const [schema] = splitName(name);
  return schema || undefined;
}

/** The name a path `[schema, name]` or `[name]` stands for (PostgreSQL's `public.t` is `t`). */
export function joinName(parts: string[], d: Dialect): string {
  if (parts.length === 2 && d === 'POSTGRESQL' && parts[0] === 'public') return parts[1] as string;
  if (parts.length > 2)
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Error parsing Spanner DDL statement: ${parts.join('.')} has more than one schema part`,
    );
  return parts.join('.');
}

/** Reads `name` or `schema.name` at `tokens[i]`; returns the name and the index after it. */
export function readName(tokens: Token[], i: number, d: Dialect): [string, number] {
  const parts = [identName(tokens[i], d)];
  let j = i + 1;
  while (isOp(tokens[j], '.')) {
    parts.push(identName(tokens[j + 1], d));
    j += 2;
  }
  return [joinName(parts, d), j];
}

/** Schema names the service reserves (case-insensitive), and the prefixes it refuses. */
const RESERVED = new Set(
  [
    'INFORMATION_SCHEMA',
    'safe',
    'aead',
    'kll_quantiles',
    'keys',
    'hll_count',
    'net',
    'ml',
    'SPANNER_PLACEMENT',
    'SPANNER_SYS',
    'pg_information_schema',
    'pg_catalog',
    'pg',
    'public',
    'DEFINITION_SCHEMA',
    'default',
    'spanner',
  ].map((n) => n.toLowerCase()),
);

/** Refuses a schema name the service refuses, with its codes and messages. */
export function checkSchemaName(name: string): void {
  if (name.includes('.'))
    throw new SpannerError(Code.UNIMPLEMENTED, `Schema not yet supported in named schema: ${name}.`);
  if (RESERVED.has(name.toLowerCase()) || name.startsWith('spanner_') || name.startsWith('pg_'))
    throw new SpannerError(Code.INVALID_ARGUMENT, `Schema name not valid: ${name}.`);
}
