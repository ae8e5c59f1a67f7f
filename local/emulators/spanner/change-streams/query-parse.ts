/**
 * Recognises change-stream TVF queries: GoogleSQL `SELECT ChangeRecord FROM READ_<stream>(…)` (positional or
 * named arguments) and PostgreSQL `SELECT * FROM "spanner"."read_json_<stream>"($1, $2, $3, $4, null)`.
 * Only that exact shape is accepted; anything combined with it is the service's UNIMPLEMENTED error.
 */
import { Code, SpannerError } from '../hooks';

/** One argument as written: a query parameter, NULL, or a literal. */
export type ArgValue =
  | { kind: 'param'; name: string }
  | { kind: 'null' }
  | { kind: 'string'; text: string }
  | { kind: 'int'; text: string }
  | { kind: 'timestamp'; text: string };

/** One argument with its (lower-case) name when given as `name => value`. */
export interface RawArg {
  name?: string;
  value: ArgValue;
}

/** A located TVF reference. */
export interface TvfReference {
  /** Stream name as written after the prefix. */
  streamName: string;
  /** The TVF's name as written, e.g. `READ_Orders` or `read_json_orders`. */
  tvfName: string;
  /** Index of the opening parenthesis of the argument list. */
  openParen: number;
}

const GSQL_TVF = /`?\b(READ_([A-Za-z_][A-Za-z0-9_]*))`?\s*\(/i;
const PG_TVF =
  /(?:"spanner"|\bspanner)\s*\.\s*(?:"(read_json_([^"]+))"|\b(read_json_([A-Za-z_][A-Za-z0-9_$]*)))\s*\(/i;

/** Finds the first change-stream TVF reference in `sql` (its stream may not exist). */
export function findTvf(sql: string, pg: boolean): TvfReference | undefined {
  if (pg) {
    const m = PG_TVF.exec(sql);
    if (!m) return undefined;
    return {
      tvfName: m[1] ?? m[3] ?? '',
      streamName: m[2] ?? m[4] ?? '',
      openParen: m.index + m[0].length - 1,
    };
  }
  const m = GSQL_TVF.exec(sql);
  if (!m) return undefined;
  return { tvfName: m[1] ?? '', streamName: m[2] ?? '', openParen: m.index + m[0].length - 1 };
}

/** Splits the text between balanced parentheses at top-level commas; returns the pieces and the end index. */
function splitArgs(sql: string, open: number): { pieces: string[]; close: number } | undefined {
  const pieces: string[] = [];
  let depth = 0;
  let quote = '';
  let start = open + 1;
  for (let i = open; i < sql.length; i++) {
    const ch = sql[i] as string;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(') depth++;
    else if (ch === ')' && --depth === 0) {
      pieces.push(sql.slice(start, i));
      return { pieces: pieces.length === 1 && pieces[0]?.trim() === '' ? [] : pieces, close: i };
    } else if (ch === ',' && depth === 1) {
      pieces.push(sql.slice(start, i));
      start = i + 1;
    }
  }
  return undefined;
}

function parseValue(text: string, pg: boolean): ArgValue | undefined {
  const t = text.trim();
  let m = /^@([A-Za-z_][A-Za-z0-9_]*)$/.exec(t);
  if (m && !pg) return { kind: 'param', name: m[1] ?? '' };
  m = /^\$(\d+)$/.exec(t);
  if (m && pg) return { kind: 'param', name: `p${m[1]}` };
  if (/^null$/i.test(t)) return { kind: 'null' };
  if (/^-?\d+$/.test(t)) return { kind: 'int', text: t };
  m = /^'([^']*)'$/.exec(t);
  if (m) return { kind: 'string', text: m[1] ?? '' };
  m =
    /^timestamp(?:tz|\s+with\s+time\s+zone)?\s*'([^']*)'$/i.exec(t) ??
    /^'([^']*)'\s*::\s*timestamptz$/i.exec(t);
  if (m) return { kind: 'timestamp', text: m[1] ?? '' };
  m = /^"([^"]*)"$/.exec(t);
  if (m && !pg) return { kind: 'string', text: m[1] ?? '' };
  return undefined;
}

/** The service's "must not be combined" error for this dialect. */
export function illegalSyntax(pg: boolean, tvfName: string): SpannerError {
  const how = pg
    ? `select * from "spanner"."${tvfName}"(<args>)`
    : `SELECT ChangeRecord FROM ${tvfName}(<args>)`;
  return new SpannerError(
    Code.UNIMPLEMENTED,
    `Change stream TVF must not be combined with any other SQL statements. Change stream records should be read using \`${how}\`.`,
  );
}

/** Checks the query's shape and parses its arguments. */
export function parseTvfArguments(sql: string, pg: boolean, ref: TvfReference): RawArg[] {
  const prefix = sql.slice(0, ref.openParen);
  const select = pg
    ? new RegExp(
        `^\\s*select\\s+(?:\\*|"?${ref.tvfName}"?)\\s+from\\s+(?:"spanner"|spanner)\\s*\\.\\s*"?${ref.tvfName}"?\\s*$`,
        'i',
      )
    : new RegExp(`^\\s*select\\s+(?:\\*|\`?ChangeRecord\`?)\\s+from\\s+\`?${ref.tvfName}\`?\\s*$`, 'i');
  const split = splitArgs(sql, ref.openParen);
  if (!select.test(prefix) || !split || !/^\s*;?\s*$/.test(sql.slice(split.close + 1))) {
    throw illegalSyntax(pg, ref.tvfName);
  }
  return split.pieces.map((piece, index) => {
    const named = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=>([\s\S]*)$/.exec(piece);
    const value = parseValue(named ? (named[2] ?? '') : piece, pg);
    if (!value) {
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        `Invalid argument of change stream TVF ${ref.tvfName}. Argument ${index} is not a literal or parameter. Implicit type conversions are not supported.`,
      );
    }
    return named ? { name: (named[1] ?? '').toLowerCase(), value } : { value };
  });
}
