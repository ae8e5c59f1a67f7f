/**
 * Parser for the change-stream DDL of both dialects:
 * `CREATE CHANGE STREAM n [FOR ALL | FOR [sch.]t[(c, …)], …] [OPTIONS (k = v, …) | WITH (k = v, …)]`,
 * `ALTER CHANGE STREAM n SET FOR … | DROP FOR ALL | SET OPTIONS (…) | SET (…) | RESET (k, …)`,
 * `DROP CHANGE STREAM n`.
 */
import { Code, SpannerError } from '../hooks';
import type { ForClause, TrackedTable } from './model';

/** An option value: a string literal, a boolean, or NULL (reset to the default). */
export type OptionValue = string | boolean | null;

/** A parsed change-stream DDL statement. */
export type DdlCommand =
  | { kind: 'create'; name: string; forClause: ForClause | undefined; options: Record<string, OptionValue> }
  | { kind: 'setFor'; name: string; forClause: ForClause }
  | { kind: 'dropFor'; name: string }
  | { kind: 'setOptions'; name: string; options: Record<string, OptionValue> }
  | { kind: 'drop'; name: string };

type Token = { kind: 'word' | 'quoted' | 'string' | 'punct'; text: string };

const TOKEN = /\s*(?:(`[^`]*`|"[^"]*")|('(?:[^'\\]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(\S))/y;

function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  TOKEN.lastIndex = 0;
  for (;;) {
    if (/^\s*;?\s*$/.test(sql.slice(TOKEN.lastIndex))) return out;
    const m = TOKEN.exec(sql);
    if (!m) return out;
    if (m[1]) out.push({ kind: 'quoted', text: m[1].slice(1, -1) });
    else if (m[2]) out.push({ kind: 'string', text: m[2].slice(1, -1).replace(/\\(.)/g, '$1') });
    else if (m[3]) out.push({ kind: 'word', text: m[3] });
    else out.push({ kind: 'punct', text: m[4] ?? '' });
  }
}

/** Cursor over tokens with the helpers the grammar needs. */
class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly statement: string,
  ) {}

  fail(detail: string): never {
    throw new SpannerError(
      Code.INVALID_ARGUMENT,
      `Error parsing Spanner DDL statement: ${this.statement.trim()} : ${detail}`,
    );
  }
  peekWord(): string | undefined {
    const t = this.tokens[this.i];
    return t?.kind === 'word' ? t.text.toUpperCase() : undefined;
  }
  acceptWord(word: string): boolean {
    if (this.peekWord() !== word) return false;
    this.i++;
    return true;
  }
  expectWord(word: string): void {
    if (!this.acceptWord(word)) this.fail(`expected ${word}`);
  }
  acceptPunct(p: string): boolean {
    const t = this.tokens[this.i];
    if (t?.kind !== 'punct' || t.text !== p) return false;
    this.i++;
    return true;
  }
  expectPunct(p: string): void {
    if (!this.acceptPunct(p)) this.fail(`expected "${p}"`);
  }
  identifier(): string {
    const t = this.tokens[this.i];
    if (t?.kind !== 'word' && t?.kind !== 'quoted') this.fail('expected an identifier');
    this.i++;
    return t.text;
  }
  value(): OptionValue {
    const t = this.tokens[this.i++];
    if (t?.kind === 'string') return t.text;
    const word = t?.kind === 'word' ? t.text.toUpperCase() : '';
    if (word === 'TRUE') return true;
    if (word === 'FALSE') return false;
    if (word === 'NULL') return null;
    return this.fail('expected a string literal, TRUE, FALSE or NULL');
  }
  done(): boolean {
    return this.i >= this.tokens.length;
  }
}

function parseFor(p: Parser): ForClause {
  if (p.acceptWord('ALL')) return { all: true };
  const tables: TrackedTable[] = [];
  do {
    let table = p.identifier();
    // A table of a named schema: `sch.T` (validateFor reads PostgreSQL's `public.t` as `t`).
    if (p.acceptPunct('.')) table = `${table}.${p.identifier()}`;
    let columns: string[] | null = null;
    if (p.acceptPunct('(')) {
      columns = [];
      if (!p.acceptPunct(')')) {
        do columns.push(p.identifier());
        while (p.acceptPunct(','));
        p.expectPunct(')');
      }
    }
    tables.push({ table, columns });
  } while (p.acceptPunct(','));
  return { all: false, tables };
}

function parseOptions(p: Parser): Record<string, OptionValue> {
  const options: Record<string, OptionValue> = {};
  p.expectPunct('(');
  do {
    const key = p.identifier().toLowerCase();
    p.expectPunct('=');
    options[key] = p.value();
  } while (p.acceptPunct(','));
  p.expectPunct(')');
  return options;
}

function parseReset(p: Parser): Record<string, OptionValue> {
  const options: Record<string, OptionValue> = {};
  p.expectPunct('(');
  do options[p.identifier().toLowerCase()] = null;
  while (p.acceptPunct(','));
  p.expectPunct(')');
  return options;
}

function parseCreate(p: Parser, name: string): DdlCommand {
  const forClause = p.acceptWord('FOR') ? parseFor(p) : undefined;
  const options = p.acceptWord('OPTIONS') || p.acceptWord('WITH') ? parseOptions(p) : {};
  return { kind: 'create', name, forClause, options };
}

function parseAlter(p: Parser, name: string): DdlCommand {
  if (p.acceptWord('DROP')) {
    p.expectWord('FOR');
    p.expectWord('ALL');
    return { kind: 'dropFor', name };
  }
  if (p.acceptWord('RESET')) return { kind: 'setOptions', name, options: parseReset(p) };
  p.expectWord('SET');
  if (p.acceptWord('FOR')) return { kind: 'setFor', name, forClause: parseFor(p) };
  p.acceptWord('OPTIONS');
  return { kind: 'setOptions', name, options: parseOptions(p) };
}

/** Parses a change-stream DDL statement; undefined when the statement is not one. */
export function parseChangeStreamDdl(statement: string): DdlCommand | undefined {
  const head = /^\s*(CREATE|ALTER|DROP)\s+CHANGE\s+STREAM\b/i.exec(statement);
  if (!head) return undefined;
  const p = new Parser(tokenize(statement.slice(head[0].length)), statement);
  const name = p.identifier();
  const verb = (head[1] ?? '').toUpperCase();
  const command =
    verb === 'CREATE'
      ? parseCreate(p, name)
      : verb === 'ALTER'
        ? parseAlter(p, name)
        : { kind: 'drop', name };
  if (!p.done()) p.fail('unexpected text after the statement');
  return command as DdlCommand;
}
