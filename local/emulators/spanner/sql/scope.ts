/**
 * Names during compilation: the statement's context (dialect, catalog, parameters, the user tables read)
 * and the scopes of FROM items, where column names, range variables, value tables and WITH names resolve
 * from the innermost query outwards.
 */
import { Code, SpannerError, type WireValue } from '../hooks';
import type { InformationSchema } from '../info-schema';
import type { Schema } from '../schema';
import { qi } from '../storage';
import type { Dialect } from '../tokenizer';
import { type StoredValue, wireToStored } from '../values';
import { at } from './cursor';
import { arrayOf, type SqlType, T } from './typing';

/** A column visible in a scope: its name, type and SQL reference. */
export interface Col {
  name: string;
  type: SqlType;
  sql: string;
  /** Hidden by JOIN … USING (the merged column stands for it). */
  hidden?: boolean;
}

/** A FROM item's range variable. `value` is set for value tables (UNNEST, SELECT AS STRUCT). */
export interface Range {
  name?: string;
  cols: Col[];
  value?: Col;
  /** What `*` expands to, when not the visible columns (value tables expand to their fields). */
  star?: Col[];
}

/** A WITH entry: its SQL name and output columns. */
export interface CteDef {
  sql: string;
  cols: Array<{ name: string; type: SqlType }>;
}

/** Query parameters: declared types, wire values, and the types untyped ones take from their context. */
export class Params {
  private readonly fixed = new Map<string, SqlType>();
  readonly used = new Set<string>();

  constructor(
    readonly values: Record<string, WireValue>,
    readonly declared: Record<string, SqlType | undefined>,
  ) {}

  /** The declared type, or undefined for an untyped parameter. */
  declaredType(name: string): SqlType | undefined {
    const t = this.declared[name];
    return t && t.code !== 'TYPE_CODE_UNSPECIFIED' ? t : undefined;
  }

  has(name: string): boolean {
    return name in this.values || this.declaredType(name) !== undefined;
  }

  /** Gives an untyped parameter the type its context needs (the first context wins). */
  fix(name: string, t: SqlType): void {
    if (!this.fixed.has(name)) this.fixed.set(name, t);
  }

  /** An untyped parameter's type: fixed by context, else read from its value. */
  untypedType(name: string): SqlType {
    const f = this.fixed.get(name);
    if (f) return f;
    const v = this.values[name] ?? null;
    if (typeof v === 'boolean') return T.BOOL;
    if (typeof v === 'number') return Number.isInteger(v) ? T.INT64 : T.FLOAT64;
    if (Array.isArray(v)) return arrayOf(T.STRING);
    return v === null ? T.INT64 : T.STRING;
  }

  /** Stored values of the parameters the statement uses, in their final types. */
  bind(): Record<string, StoredValue> {
    const out: Record<string, StoredValue> = {};
    for (const name of this.used) {
      const t = this.declaredType(name) ?? this.untypedType(name);
      try {
        out[name] = wireToStored(this.values[name] ?? null, t);
      } catch (err) {
        const why = err instanceof Error ? err.message : String(err);
        throw new SpannerError(Code.INVALID_ARGUMENT, `Invalid value for bind parameter ${name}: ${why}`);
      }
    }
    return out;
  }
}

/** What a statement compiles against. */
export interface Catalog {
  schema: Schema;
  info?: InformationSchema;
}

/** Per-statement compilation state. */
export class CompileCtx {
  /** Lower-cased names of the user tables the statement reads (each gets a snapshot CTE). */
  readonly tables = new Set<string>();
  private n = 0;

  constructor(
    readonly src: string,
    readonly dialect: Dialect,
    readonly catalog: Catalog,
    readonly params: Params,
  ) {}

  get pg(): boolean {
    return this.dialect === 'POSTGRESQL';
  }

  /** A fresh, quoted SQLite name. */
  fresh(prefix: string): string {
    this.n++;
    return qi(`${prefix}$${this.n}`);
  }

  /** `[at l:c]` for GoogleSQL messages (PostgreSQL's carry no position). */
  at(pos: number): string {
    return this.pg ? '' : at(this.src, pos);
  }

  /** Throws INVALID_ARGUMENT (or `code`) with the position appended. */
  fail(message: string, pos: number, code: number = Code.INVALID_ARGUMENT): never {
    throw new SpannerError(code, `${message}${this.at(pos)}`);
  }
}

/** One level of name resolution (a SELECT's FROM clause), chained to the enclosing query's. */
export class Scope {
  readonly ranges: Range[] = [];
  readonly ctes = new Map<string, CteDef>();

  constructor(readonly parent?: Scope) {}

  /** A WITH name visible here. */
  cte(name: string): CteDef | undefined {
    return this.ctes.get(name.toLowerCase()) ?? this.parent?.cte(name);
  }

  /** A range variable of this level by name. */
  range(name: string): Range | undefined {
    const key = name.toLowerCase();
    return this.ranges.find((r) => r.name?.toLowerCase() === key);
  }

  /** Columns of this level called `name` (value-table struct fields included). */
  columns(name: string): Col[] {
    const key = name.toLowerCase();
    const out: Col[] = [];
    for (const r of this.ranges)
      for (const c of r.cols) if (!c.hidden && c.name.toLowerCase() === key) out.push(c);
    return out;
  }
}
