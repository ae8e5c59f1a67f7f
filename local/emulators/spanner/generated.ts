/**
 * Generated columns: their values computed from the rest of the row with the generation expression, through
 * the typed SQL front end queries use (so an expression the emulator cannot evaluate fails the DDL, not a
 * later write). Stored and non-stored columns are both computed on write; only INFORMATION_SCHEMA and change
 * streams tell them apart. TOKENLIST columns (full-text search) hold no readable value and stay NULL.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { Code, SpannerError } from './hooks';
import type { Column, Schema, Table } from './schema';
import { compileRowValue } from './sql';
import type { Row } from './storage';
import { qi } from './storage';
import { type Token, tokenize } from './tokenizer';
import { rawToColumn, type StoredValue } from './values';

/** Functions of full-text search: accepted in TOKENLIST expressions, never evaluated. */
const TOKENIZERS = /^(spanner\.)?tokeni[sz]e_[a-z_]+$|^token$/i;

function tokensOf(schema: Schema, c: Column): Token[] {
  return tokenize((c.generated as { expression: string }).expression, schema.dialect);
}

/** Columns of `table` a generated column's expression reads (case-insensitive match on identifiers). */
export function referencedColumns(schema: Schema, table: Table, c: Column): Column[] {
  const names = new Set(
    tokensOf(schema, c)
      .filter((t) => t.kind === 'ident' || t.kind === 'qident')
      .map((t) => t.value.toLowerCase()),
  );
  return table.columns.filter((x) => x !== c && names.has(x.name.toLowerCase()));
}

/** Evaluates the generated columns of rows, one prepared statement per column and column set. */
export class Generator {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly schema: Schema,
  ) {}

  /** Checks that every generated column of `table` can be evaluated (called when DDL defines one). */
  validate(table: Table): void {
    const row: Row = {};
    for (const c of table.columns) if (!c.generated) row[c.name] = null;
    this.fill(table, row);
  }

  /** Sets every generated column of `row` (a full row of `table`) from the other columns. */
  fill(table: Table, row: Row): void {
    const generated = table.columns.filter((c) => c.generated);
    // An expression may read another generated column: two passes settle one level of nesting each way.
    for (let pass = 0; pass < 2; pass++)
      for (const c of generated) row[c.name] = this.evaluate(table, c, row);
  }

  private evaluate(table: Table, c: Column, row: Row): StoredValue {
    if (c.ct.type.code === 'TOKENLIST') return null;
    const others = table.columns.filter((x) => x !== c);
    const key = `${table.name}\u0000${c.name}\u0000${others.map((x) => x.name).join('\u0000')}`;
    let stmt = this.statements.get(key);
    if (!stmt) {
      stmt = this.prepare(table, c, others);
      this.statements.set(key, stmt);
    }
    const values = others.map((x) => row[x.name] ?? null);
    const raw = stmt
      .safeIntegers(true)
      .pluck()
      .get(...values) as StoredValue;
    try {
      return rawToColumn(raw, c.ct.type);
    } catch {
      // SQLite returns integers for BOOL comparisons and text for strings; anything else is a real mismatch.
      if (c.ct.type.code === 'STRING' && raw !== null) return String(raw);
      throw new SpannerError(
        Code.FAILED_PRECONDITION,
        `Generated column ${table.name}.${c.name}: the expression does not yield a ${c.ct.type.code}`,
      );
    }
  }

  private prepare(table: Table, c: Column, others: Column[]): BetterSqlite3.Statement {
    const tokens = tokensOf(this.schema, c);
    if (tokens.some((t) => t.kind === 'ident' && TOKENIZERS.test(t.value)))
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        `Generated column ${table.name}.${c.name}: tokenize functions need a TOKENLIST column`,
      );
    const what = `Generated column ${table.name}.${c.name}`;
    const sql = compileRowValue(tokens, this.schema, table, others, c.ct.type, what);
    const cols = others.map((x) => `? AS ${qi(x.name)}`).join(', ');
    try {
      return this.db.prepare(`SELECT (${sql}) FROM (SELECT ${cols || 'NULL AS _none'})`);
    } catch (err) {
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        `Generated column ${table.name}.${c.name}: cannot evaluate ${c.generated?.expression} (${(err as Error).message})`,
      );
    }
  }
}
