/**
 * Parser for the DDL statements the emulator supports, in both dialects. Anything else fails with
 * UNIMPLEMENTED naming the statement, so a schema the emulator cannot honour never half-applies silently.
 */
import { addTableConstraint, isTableConstraint } from './ddl-constraints';
import { type ProtoBundleAction, parseProtoBundle } from './ddl-protos';
import { Code, SpannerError } from './hooks';
import { readName, schemaOf } from './names';
import type { Column, Index, KeyPart, Table } from './schema';
import {
  closingParen,
  type Dialect,
  identName,
  isOp,
  isWord,
  splitTopLevel,
  type Token,
  tokenize,
} from './tokenizer';
import { type ColumnType, parseColumnType } from './types';

/** One parsed DDL statement. */
export type DdlAction =
  | { kind: 'createTable'; table: Table; ifNotExists: boolean }
  | { kind: 'createIndex'; index: Index; ifNotExists: boolean }
  | { kind: 'dropTable'; name: string; ifExists: boolean }
  | { kind: 'dropIndex'; name: string; ifExists: boolean }
  | { kind: 'addColumn'; table: string; column: Column }
  | { kind: 'dropColumn'; table: string; column: string }
  | { kind: 'alterColumn'; table: string; column: string; change: ColumnChange }
  | { kind: 'setOption'; name: string; value: string }
  | { kind: 'createSchema'; name: string; ifNotExists: boolean }
  | { kind: 'dropSchema'; name: string; ifExists: boolean }
  | ProtoBundleAction;

function unsupported(what: string): never {
  throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support this DDL: ${what}`);
}

function syntax(what: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, `Error parsing Spanner DDL statement: ${what}`);
}

function parseKeyList(tokens: Token[], d: Dialect): KeyPart[] {
  return splitTopLevel(tokens).map((part) => ({
    name: identName(part[0], d),
    desc: isWord(part[1], 'DESC'),
  }));
}

function parenList(tokens: Token[], i: number): [Token[], number] {
  if (!isOp(tokens[i], '(')) syntax(`expected ( near ${tokens[i]?.value ?? 'end of statement'}`);
  const end = closingParen(tokens, i);
  return [tokens.slice(i + 1, end), end + 1];
}

/** The text of tokens as written in `statement` (for a generation expression). */
function sourceText(statement: string, tokens: Token[], open: number, close: number): string {
  const first = tokens[open + 1];
  const end = tokens[close];
  if (!first || !end || first === end) return '';
  return statement.slice(first.pos, end.pos).trim();
}

/** `AS (expr) [STORED]` (GoogleSQL) / `GENERATED ALWAYS AS (expr) STORED | VIRTUAL`; index after it. */
function parseGeneration(part: Token[], i: number, statement: string, col: Column): number {
  let j = i;
  if (isWord(part[j], 'GENERATED')) {
    if (!isWord(part[j + 1], 'ALWAYS')) syntax('expected GENERATED ALWAYS AS');
    j += 2;
  }
  if (!isWord(part[j], 'AS') || !isOp(part[j + 1], '(')) syntax('expected AS ( expression )');
  const close = closingParen(part, j + 1);
  const expression = sourceText(statement, part, j + 1, close);
  if (!expression) syntax(`generated column ${col.name} has an empty expression`);
  let stored = false;
  let k = close + 1;
  if (isWord(part[k], 'STORED')) [stored, k] = [true, k + 1];
  else if (isWord(part[k], 'VIRTUAL')) k++;
  col.generated = { expression, stored };
  return k - 1;
}

/** Parses `OPTIONS (allow_commit_timestamp = …)` at `i`; returns the index of its closing parenthesis. */
function parseColumnOptions(part: Token[], i: number, col: Column): number {
  const [opts, end] = parenList(part, i + 1);
  const text = opts.map((o) => o.value.toLowerCase()).join('');
  if (text === 'allow_commit_timestamp=true') col.ct.allowCommitTimestamp = true;
  else if (text === 'allow_commit_timestamp=false' || text === 'allow_commit_timestamp=null')
    col.ct.allowCommitTimestamp = false;
  else unsupported(`column option ${text}`);
  return end - 1;
}

/** Parses one column definition; `pk` collects an inline PostgreSQL PRIMARY KEY. */
function parseColumn(part: Token[], d: Dialect, pk: KeyPart[], statement = ''): Column {
  const name = identName(part[0], d);
  const [ct, after] = parseColumnType(part, 1, d);
  const col: Column = { name, ct, nullable: true };
  for (let i = after; i < part.length; i++) {
    const t = part[i];
    if (isWord(t, 'NOT') && isWord(part[i + 1], 'NULL')) [col.nullable, i] = [false, i + 1];
    else if (isWord(t, 'PRIMARY') && isWord(part[i + 1], 'KEY') && d === 'POSTGRESQL') {
      pk.push({ name, desc: false });
      i++;
    } else if (isWord(t, 'OPTIONS')) i = parseColumnOptions(part, i, col);
    else if (isWord(t, 'AS') || isWord(t, 'GENERATED')) i = parseGeneration(part, i, statement, col);
    else if (isWord(t, 'HIDDEN')) col.hidden = true;
    else if (isWord(t, 'NULL')) {
      // PostgreSQL's explicit NULL is the default.
    } else unsupported(`column ${name} clause ${t?.value} (DEFAULT values are not emulated)`);
  }
  if (col.ct.type.code === 'TOKENLIST' && (!col.generated || !col.hidden))
    unsupported(`TOKENLIST column ${name} that is not a HIDDEN generated column`);
  return col;
}

function parseInterleave(tokens: Token[], i: number, d: Dialect, table: Table): number {
  if (!isWord(tokens[i], 'INTERLEAVE')) return i;
  if (!isWord(tokens[i + 1], 'IN')) syntax('expected INTERLEAVE IN');
  let j = i + 2;
  if (isWord(tokens[j], 'PARENT')) j++;
  [table.parent, j] = readName(tokens, j, d);
  if (isWord(tokens[j], 'ON') && isWord(tokens[j + 1], 'DELETE')) {
    table.onDeleteCascade = isWord(tokens[j + 2], 'CASCADE');
    j += table.onDeleteCascade ? 3 : 4;
  }
  return j;
}

function parseCreateTable(tokens: Token[], d: Dialect, statement: string): DdlAction {
  let i = 2;
  const ifNotExists = isWord(tokens[i], 'IF');
  if (ifNotExists) i += 3;
  const [name, afterName] = readName(tokens, i, d);
  const [body, after] = parenList(tokens, afterName);
  const pk: KeyPart[] = [];
  const columns: Column[] = [];
  const constraints: Token[][] = [];
  for (const part of splitTopLevel(body).filter((p) => p.length > 0)) {
    if (isWord(part[0], 'PRIMARY') && isWord(part[1], 'KEY'))
      pk.push(...parseKeyList(parenList(part, 2)[0], d));
    else if (isTableConstraint(part)) constraints.push(part);
    else columns.push(parseColumn(part, d, pk, statement));
  }
  const table: Table = { name, columns, primaryKey: pk };
  for (const part of constraints) addTableConstraint(table, part, d);
  let j = after;
  while (j < tokens.length) {
    if (isWord(tokens[j], 'PRIMARY') && isWord(tokens[j + 1], 'KEY')) {
      const [keys, end] = parenList(tokens, j + 2);
      table.primaryKey = keys.length ? parseKeyList(keys, d) : [];
      j = end;
    } else if (isOp(tokens[j], ',')) j++;
    else if (isWord(tokens[j], 'INTERLEAVE')) j = parseInterleave(tokens, j, d, table);
    else unsupported(`CREATE TABLE clause ${tokens[j]?.value}`);
  }
  return { kind: 'createTable', table, ifNotExists };
}

function parseCreateIndex(tokens: Token[], d: Dialect): DdlAction {
  let i = 1;
  const unique = isWord(tokens[i], 'UNIQUE');
  if (unique) i++;
  const nullFiltered = isWord(tokens[i], 'NULL_FILTERED');
  if (nullFiltered) i++;
  i++; // INDEX
  const ifNotExists = isWord(tokens[i], 'IF');
  if (ifNotExists) i += 3;
  const [written, afterName] = readName(tokens, i, d);
  if (!isWord(tokens[afterName], 'ON')) syntax('expected ON after the index name');
  const [table, afterTable] = readName(tokens, afterName + 1, d);
  const [keys, after] = parenList(tokens, afterTable);
  // PostgreSQL puts an index in its table's schema (`CREATE INDEX i ON sch.t` makes `sch.i`).
  const tableSchema = schemaOf(table);
  const name =
    d === 'POSTGRESQL' && tableSchema && !schemaOf(written) ? `${tableSchema}.${written}` : written;
  const index: Index = { name, table, unique, nullFiltered, keys: parseKeyList(keys, d), storing: [] };
  let j = after;
  while (j < tokens.length) {
    if (isWord(tokens[j], 'STORING') || isWord(tokens[j], 'INCLUDE')) {
      const [cols, end] = parenList(tokens, j + 1);
      index.storing = splitTopLevel(cols).map((p) => identName(p[0], d));
      j = end;
    } else if (isOp(tokens[j], ',')) j++;
    else if (isWord(tokens[j], 'INTERLEAVE') && isWord(tokens[j + 1], 'IN'))
      [index.interleaveIn, j] = readName(tokens, j + 2, d);
    else unsupported(`CREATE INDEX clause ${tokens[j]?.value}`);
  }
  return { kind: 'createIndex', index, ifNotExists };
}

/** A change to one column (ALTER TABLE … ALTER COLUMN): a new type, nullability or commit-timestamp option. */
export interface ColumnChange {
  /** The new declaration (type and NOT NULL), when the statement restates the column. */
  type?: ColumnType;
  nullable?: boolean;
  allowCommitTimestamp?: boolean;
}

/** GoogleSQL `c type [NOT NULL]` or `c SET OPTIONS (…)`; PostgreSQL `c TYPE t`, `SET / DROP NOT NULL`. */
function parseAlterColumn(tokens: Token[], d: Dialect): ColumnChange {
  const [first, second] = tokens;
  if (isWord(first, 'SET') && isWord(second, 'OPTIONS')) {
    const col: Column = { name: '', ct: { type: { code: 'TIMESTAMP' } }, nullable: true };
    parseColumnOptions(tokens, 1, col);
    return { allowCommitTimestamp: col.ct.allowCommitTimestamp === true };
  }
  if ((isWord(first, 'SET') || isWord(first, 'DROP')) && isWord(second, 'NOT') && isWord(tokens[2], 'NULL'))
    return { nullable: isWord(first, 'DROP') };
  // PostgreSQL spells a type change `TYPE t` or `SET DATA TYPE t`.
  const setDataType = isWord(first, 'SET') && isWord(second, 'DATA') && isWord(tokens[2], 'TYPE');
  if ((isWord(first, 'SET') || isWord(first, 'DROP')) && !setDataType)
    unsupported(`ALTER COLUMN ${first?.value} ${second?.value ?? ''}`);
  const typeAt = setDataType ? 3 : isWord(first, 'TYPE') ? 1 : -1;
  const at = d === 'POSTGRESQL' ? typeAt : 0;
  if (at < 0) syntax('expected TYPE, SET NOT NULL or DROP NOT NULL after ALTER COLUMN');
  const col = parseColumn([{ kind: 'ident', value: 'c', pos: -1 }, ...tokens.slice(at)], d, []);
  if (col.generated || col.hidden) unsupported('ALTER COLUMN to a generated or hidden column');
  const change: ColumnChange = { type: col.ct };
  if (d !== 'POSTGRESQL') change.nullable = col.nullable;
  if (col.ct.allowCommitTimestamp !== undefined) change.allowCommitTimestamp = col.ct.allowCommitTimestamp;
  return change;
}

function parseAlterTable(tokens: Token[], d: Dialect, statement: string): DdlAction {
  const [table, verbAt] = readName(tokens, 2, d);
  const verb = tokens[verbAt];
  let i = verbAt + 1;
  if (isWord(tokens[i], 'COLUMN')) i++;
  if (isWord(verb, 'ADD'))
    return { kind: 'addColumn', table, column: parseColumn(tokens.slice(i), d, [], statement) };
  if (isWord(verb, 'DROP')) return { kind: 'dropColumn', table, column: identName(tokens[i], d) };
  if (isWord(verb, 'ALTER'))
    return {
      kind: 'alterColumn',
      table,
      column: identName(tokens[i], d),
      change: parseAlterColumn(tokens.slice(i + 1), d),
    };
  return unsupported(`ALTER TABLE ... ${verb?.value ?? ''}`);
}

function parseAlterDatabase(tokens: Token[]): DdlAction {
  const text = tokens.slice(3).map((t) => (t.kind === 'string' ? `'${t.value}'` : t.value.toLowerCase()));
  const joined = text.join(' ');
  const m =
    /^set options \( version_retention_period = '([^']*)' \)$/.exec(joined) ??
    /^set spanner \. version_retention_period (?:=|to) '([^']*)'$/.exec(joined);
  if (!m) return unsupported(`ALTER DATABASE ${joined}`);
  return { kind: 'setOption', name: 'version_retention_period', value: m[1] as string };
}

function parseDrop(tokens: Token[], d: Dialect): DdlAction {
  const ifExists = isWord(tokens[2], 'IF') && isWord(tokens[3], 'EXISTS');
  const [name, after] = readName(tokens, ifExists ? 4 : 2, d);
  if (isWord(tokens[1], 'SCHEMA')) {
    // PostgreSQL's CASCADE / RESTRICT: RESTRICT is what the service does (a schema with objects is refused).
    if (after < tokens.length && !isWord(tokens[after], 'RESTRICT'))
      unsupported(`DROP SCHEMA ... ${tokens[after]?.value ?? ''}`);
    return { kind: 'dropSchema', name, ifExists };
  }
  if (isWord(tokens[1], 'TABLE')) return { kind: 'dropTable', name, ifExists };
  if (isWord(tokens[1], 'INDEX')) return { kind: 'dropIndex', name, ifExists };
  return unsupported(`DROP ${tokens[1]?.value ?? ''}`);
}

function parseCreateSchema(tokens: Token[], d: Dialect): DdlAction {
  const ifNotExists = isWord(tokens[2], 'IF') && isWord(tokens[3], 'NOT') && isWord(tokens[4], 'EXISTS');
  const [name, after] = readName(tokens, ifNotExists ? 5 : 2, d);
  if (after < tokens.length) unsupported(`CREATE SCHEMA ... ${tokens[after]?.value ?? ''}`);
  return { kind: 'createSchema', name, ifNotExists };
}

/** Parses one DDL statement. */
export function parseDdl(statement: string, d: Dialect): DdlAction {
  const text = statement.trim().replace(/;\s*$/, '');
  const tokens = tokenize(text, d);
  const [a, b, c] = tokens;
  const bundle = parseProtoBundle(tokens, d, text);
  if (bundle) return bundle;
  if (isWord(a, 'CREATE') && isWord(b, 'TABLE')) return parseCreateTable(tokens, d, text);
  if (isWord(a, 'CREATE') && isWord(b, 'SCHEMA')) return parseCreateSchema(tokens, d);
  if (isWord(a, 'CREATE') && (isWord(b, 'INDEX') || isWord(b, 'UNIQUE') || isWord(b, 'NULL_FILTERED')))
    return parseCreateIndex(tokens, d);
  if (isWord(a, 'ALTER') && isWord(b, 'TABLE')) return parseAlterTable(tokens, d, text);
  if (isWord(a, 'ALTER') && isWord(b, 'DATABASE')) return parseAlterDatabase(tokens);
  if (isWord(a, 'DROP')) return parseDrop(tokens, d);
  if (isWord(a, 'CREATE') && isWord(b, 'CHANGE') && isWord(c, 'STREAM'))
    return unsupported('change streams need the change-stream engine, which is not enabled');
  return unsupported(statement.slice(0, 60));
}
