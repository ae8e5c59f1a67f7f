/**
 * A small SQL tokenizer for both dialects. DDL, DML and query translation all work on tokens, so string
 * literals, quoted identifiers, comments and parameters are never mistaken for SQL text.
 */
import { Code, SpannerError } from './hooks';

/** Dialect of a database, as Spanner names it. */
export type Dialect = 'GOOGLE_STANDARD_SQL' | 'POSTGRESQL';

/** One token. `value` is the identifier name, the unescaped string, the parameter name or the operator. */
export interface Token {
  kind: 'ident' | 'qident' | 'string' | 'bytes' | 'number' | 'param' | 'op' | 'hint';
  value: string;
  /** Offset of the token in the source text. */
  pos: number;
}

const OPS = ['<=>', '<>', '!=', '<=', '>=', '||', '<<', '>>', '=>', '::'];
const ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '`': '`',
};

function fail(message: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, message);
}

/** Reads a quoted run starting at `i` (the opening quote); returns the unescaped text and the end offset. */
function readQuoted(sql: string, i: number, quote: string, backslash: boolean): [string, number] {
  let out = '';
  let j = i + 1;
  while (j < sql.length) {
    const c = sql[j] as string;
    if (backslash && c === '\\') {
      const n = sql[j + 1] ?? '';
      out += ESCAPES[n] ?? fail(`Unsupported escape sequence \\${n} in literal`);
      j += 2;
    } else if (c === quote) {
      if (!backslash && sql[j + 1] === quote) {
        out += quote;
        j += 2;
      } else return [out, j + 1];
    } else {
      out += c;
      j++;
    }
  }
  return fail(`Syntax error: unclosed literal starting at offset ${i}`);
}

function skipSpaceAndComments(sql: string, i: number, dialect: Dialect): number {
  let j = i;
  for (;;) {
    while (j < sql.length && /\s/.test(sql[j] as string)) j++;
    if (sql.startsWith('--', j) || (dialect === 'GOOGLE_STANDARD_SQL' && sql[j] === '#')) {
      const end = sql.indexOf('\n', j);
      j = end < 0 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', j)) {
      const end = sql.indexOf('*/', j + 2);
      if (end < 0) fail('Syntax error: unclosed comment');
      j = end + 2;
    } else return j;
  }
}

function readString(sql: string, i: number, dialect: Dialect): [Token, number] | undefined {
  const c = sql[i] as string;
  const gsql = dialect === 'GOOGLE_STANDARD_SQL';
  if (gsql && /[rRbB]/.test(c) && /['"]/.test(sql[i + 1] ?? '')) {
    if (/[rR]/.test(c)) fail('Raw string literals are not supported by the emulator');
    const [value, end] = readQuoted(sql, i + 1, sql[i + 1] as string, true);
    return [{ kind: 'bytes', value, pos: i }, end];
  }
  if (c === "'" || (gsql && c === '"')) {
    if (sql.startsWith(c.repeat(3), i)) fail('Triple-quoted literals are not supported by the emulator');
    const [value, end] = readQuoted(sql, i, c, gsql);
    return [{ kind: 'string', value, pos: i }, end];
  }
  if ((gsql && c === '`') || (!gsql && c === '"')) {
    const [value, end] = readQuoted(sql, i, c, false);
    return [{ kind: 'qident', value, pos: i }, end];
  }
  if (!gsql && c === '$' && sql[i + 1] === '$')
    fail('Dollar-quoted strings are not supported by the emulator');
  return undefined;
}

function readOther(sql: string, i: number, dialect: Dialect): [Token, number] {
  const rest = sql.slice(i);
  const word = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(rest);
  if (word) return [{ kind: 'ident', value: word[0], pos: i }, i + word[0].length];
  const num = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?/.exec(rest);
  if (num) return [{ kind: 'number', value: num[0], pos: i }, i + num[0].length];
  if (rest.startsWith('@{')) {
    const end = sql.indexOf('}', i);
    if (end < 0) fail('Syntax error: unclosed hint');
    return [{ kind: 'hint', value: sql.slice(i + 2, end), pos: i }, end + 1];
  }
  const param = dialect === 'POSTGRESQL' ? /^\$(\d+)/.exec(rest) : /^@([A-Za-z_][A-Za-z0-9_]*)/.exec(rest);
  if (param) return [{ kind: 'param', value: param[1] as string, pos: i }, i + param[0].length];
  const op = OPS.find((o) => rest.startsWith(o)) ?? (rest[0] as string);
  return [{ kind: 'op', value: op, pos: i }, i + op.length];
}

/** Splits `sql` into tokens; throws INVALID_ARGUMENT on unclosed literals or unsupported literal forms. */
export function tokenize(sql: string, dialect: Dialect): Token[] {
  const out: Token[] = [];
  let i = skipSpaceAndComments(sql, 0, dialect);
  while (i < sql.length) {
    const [token, end] = readString(sql, i, dialect) ?? readOther(sql, i, dialect);
    out.push(token);
    i = skipSpaceAndComments(sql, end, dialect);
  }
  return out;
}

/** True when the token is the keyword `word` (case-insensitive, unquoted). */
export function isWord(t: Token | undefined, word: string): boolean {
  return t?.kind === 'ident' && t.value.toUpperCase() === word;
}

/** True when the token is the operator `op`. */
export function isOp(t: Token | undefined, op: string): boolean {
  return t?.kind === 'op' && t.value === op;
}

/** Name of an identifier token: PostgreSQL folds unquoted names to lower case; GoogleSQL keeps them. */
export function identName(t: Token | undefined, dialect: Dialect): string {
  if (t?.kind === 'qident') return t.value;
  if (t?.kind === 'ident') return dialect === 'POSTGRESQL' ? t.value.toLowerCase() : t.value;
  return fail(`Syntax error: expected an identifier${t ? ` but got ${JSON.stringify(t.value)}` : ''}`);
}

/** Splits tokens at depth-0 commas (parentheses, brackets and angle brackets of ARRAY<...> nest). */
export function splitTopLevel(tokens: Token[], sep = ','): Token[][] {
  const parts: Token[][] = [[]];
  let depth = 0;
  for (const t of tokens) {
    if (t.kind === 'op' && (t.value === '(' || t.value === '[')) depth++;
    if (t.kind === 'op' && (t.value === ')' || t.value === ']')) depth--;
    if (depth === 0 && t.kind === 'op' && t.value === sep) parts.push([]);
    else (parts[parts.length - 1] as Token[]).push(t);
  }
  return parts;
}

/** Index of the parenthesis closing the one at `open`. */
export function closingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isOp(tokens[i], '(')) depth++;
    if (isOp(tokens[i], ')') && --depth === 0) return i;
  }
  return fail('Syntax error: unbalanced parentheses');
}
