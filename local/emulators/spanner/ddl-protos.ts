/**
 * Proto bundle DDL (GoogleSQL only): `CREATE PROTO BUNDLE (pkg.Msg, pkg.Enum)`, `ALTER PROTO BUNDLE
 * INSERT (…) UPDATE (…) DELETE (…)` and `DROP PROTO BUNDLE`, and the resolution of a column declared by a
 * dotted type name into PROTO or ENUM by the bundle. The service's checks and messages; PostgreSQL has no
 * proto types and refuses the statements as a syntax error.
 */
import { Code, SpannerError, type SpannerTypeJson } from './hooks';
import { ProtoBundle } from './proto-bundle';
import type { Column, Schema } from './schema';
import { closingParen, type Dialect, isOp, isWord, splitTopLevel, type Token } from './tokenizer';
import type { ColumnType } from './types';

/** A parsed proto bundle statement. */
export interface ProtoBundleAction {
  kind: 'protoBundle';
  op: 'create' | 'alter' | 'drop';
  insert: string[];
  update: string[];
  delete: string[];
}

function syntax(statement: string, what: string): never {
  throw new SpannerError(
    Code.INVALID_ARGUMENT,
    `Error parsing Spanner DDL statement: ${statement} : ${what}`,
  );
}

/** `( a.B, c.D, )` at `i` (a trailing comma is tolerated); the names and the index after `)`. */
function typeList(tokens: Token[], i: number, statement: string): [string[], number] {
  if (!isOp(tokens[i], '(')) syntax(statement, `expected ( near ${tokens[i]?.value ?? 'end of statement'}`);
  const end = closingParen(tokens, i);
  const parts = splitTopLevel(tokens.slice(i + 1, end));
  const names = parts.map((part, n) => {
    if (part.length === 0 && n === parts.length - 1 && n > 0) return '';
    const ok = part.every((t, k) => (k % 2 === 0 ? t.kind === 'ident' || t.kind === 'qident' : isOp(t, '.')));
    if (!ok || part.length % 2 === 0) syntax(statement, 'expected a list of proto type names');
    return part.map((t) => t.value).join('');
  });
  return [names.filter((n) => n !== ''), end + 1];
}

/** Parses a proto bundle statement, or returns undefined when `tokens` are not one. */
export function parseProtoBundle(
  tokens: Token[],
  d: Dialect,
  statement: string,
): ProtoBundleAction | undefined {
  const [a, b, c] = tokens;
  if (!(isWord(a, 'CREATE') || isWord(a, 'ALTER') || isWord(a, 'DROP'))) return undefined;
  if (!isWord(b, 'PROTO') || !isWord(c, 'BUNDLE')) return undefined;
  if (d === 'POSTGRESQL') syntax(statement, 'syntax error at or near "PROTO"');
  const action: ProtoBundleAction = { kind: 'protoBundle', op: 'drop', insert: [], update: [], delete: [] };
  if (isWord(a, 'DROP')) {
    if (tokens.length > 3) syntax(statement, `unexpected ${tokens[3]?.value}`);
    return action;
  }
  if (isWord(a, 'CREATE')) {
    const [names, after] = typeList(tokens, 3, statement);
    if (after < tokens.length) syntax(statement, `unexpected ${tokens[after]?.value}`);
    return { ...action, op: 'create', insert: names };
  }
  let i = 3;
  for (const clause of ['INSERT', 'UPDATE', 'DELETE'] as const) {
    if (!isWord(tokens[i], clause)) continue;
    const [names, after] = typeList(tokens, i + 1, statement);
    action[clause.toLowerCase() as 'insert' | 'update' | 'delete'] = names;
    i = after;
  }
  if (i < tokens.length) syntax(statement, `unexpected ${tokens[i]?.value}`);
  return { ...action, op: 'alter' };
}

function protoTypesOf(t: SpannerTypeJson): string[] {
  if (t.code === 'ARRAY') return protoTypesOf(t.arrayElementType as SpannerTypeJson);
  return (t.code === 'PROTO' || t.code === 'ENUM') && t.protoTypeFqn ? [t.protoTypeFqn] : [];
}

/** Fails when a column of the schema still uses a type the new bundle no longer lists. */
function checkStillUsed(schema: Schema, next: ProtoBundle | undefined): void {
  for (const table of schema.tablesByName.values())
    for (const c of table.columns)
      for (const fqn of protoTypesOf(c.ct.type))
        if (!next?.kind(fqn))
          throw new SpannerError(
            Code.FAILED_PRECONDITION,
            `Removed type ${fqn} is still being used by column ${c.name}`,
          );
}

/** Applies a proto bundle statement with the request's `proto_descriptors`. */
export function applyProtoBundle(schema: Schema, a: ProtoBundleAction, descriptors?: Uint8Array): void {
  const current = schema.protoBundle;
  if (a.op !== 'create' && !current)
    throw new SpannerError(
      Code.FAILED_PRECONDITION,
      `Proto bundle does not yet exist; cannot ${a.op === 'drop' ? 'drop' : 'alter'} it`,
    );
  const next =
    a.op === 'drop' ? undefined : ProtoBundle.build(descriptors, a, a.op === 'alter' ? current : undefined);
  checkStillUsed(schema, next);
  schema.protoBundle = next?.types.size ? next : undefined;
}

function resolveType(schema: Schema, t: SpannerTypeJson): SpannerTypeJson {
  if (t.code === 'ARRAY')
    return { ...t, arrayElementType: resolveType(schema, t.arrayElementType as SpannerTypeJson) };
  if (t.code !== 'PROTO' || !t.protoTypeFqn) return t;
  const kind = schema.protoBundle?.kind(t.protoTypeFqn);
  if (!kind) throw new SpannerError(Code.NOT_FOUND, `Type not found: \`${t.protoTypeFqn}\``);
  return { code: kind, protoTypeFqn: t.protoTypeFqn };
}

/** A declared column type with its dotted type name resolved to PROTO or ENUM (NOT_FOUND when unlisted). */
export function resolveColumnType(schema: Schema, ct: ColumnType): ColumnType {
  if (!ct.protoName) return ct;
  const { protoName: _name, ...rest } = ct;
  return { ...rest, type: resolveType(schema, ct.type) };
}

/** Resolves the dotted type names of columns in place (CREATE TABLE, ADD COLUMN). */
export function resolveColumns(schema: Schema, columns: Column[]): void {
  for (const c of columns) c.ct = resolveColumnType(schema, c.ct);
}
