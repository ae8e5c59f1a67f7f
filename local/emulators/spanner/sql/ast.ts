/**
 * The syntax tree of a query or DML statement, shared by both dialects. Every node carries the offset of
 * its first token (`pos`) so errors can name the place as the service does (`[at line:column]`).
 */
import type { SpannerTypeJson } from '../hooks';

/** A literal's lexical kind (its type follows from the kind and the dialect). */
export type LiteralKind = 'int' | 'float' | 'string' | 'bytes' | 'bool' | 'null';

/** How an array subscript counts. */
export type IndexMode = 'OFFSET' | 'ORDINAL' | 'SAFE_OFFSET' | 'SAFE_ORDINAL' | 'BARE';

/** An expression. */
export type Expr =
  | { k: 'lit'; kind: LiteralKind; value: string; pos: number }
  | { k: 'typedLit'; type: SpannerTypeJson; value: string; pos: number }
  | { k: 'param'; name: string; pos: number }
  | { k: 'ident'; name: string; pos: number }
  | { k: 'dot'; base: Expr; name: string; pos: number }
  | {
      k: 'call';
      name: string;
      args: Expr[];
      distinct: boolean;
      star: boolean;
      pos: number;
      orderBy?: OrderItem[];
    }
  | { k: 'cast'; e: Expr; to: SpannerTypeJson; safe: boolean; pos: number }
  | { k: 'unary'; op: 'NEG' | 'PLUS' | 'NOT' | 'BITNOT'; e: Expr; pos: number }
  | { k: 'binary'; op: string; l: Expr; r: Expr; pos: number }
  | { k: 'is'; e: Expr; what: 'NULL' | 'TRUE' | 'FALSE'; not: boolean; pos: number }
  | { k: 'in'; e: Expr; not: boolean; list?: Expr[]; query?: Query; unnest?: Expr; pos: number }
  | { k: 'between'; e: Expr; lo: Expr; hi: Expr; not: boolean; pos: number }
  | { k: 'like'; e: Expr; pattern: Expr; not: boolean; pos: number }
  | { k: 'case'; operand?: Expr; whens: Array<{ when: Expr; result: Expr }>; else?: Expr; pos: number }
  | { k: 'exists'; query: Query; pos: number }
  | { k: 'subquery'; query: Query; pos: number }
  | { k: 'arraySubquery'; query: Query; pos: number }
  | { k: 'arrayLit'; elems: Expr[]; elemType?: SpannerTypeJson; pos: number }
  | { k: 'struct'; fields: Array<{ e: Expr; alias?: string }>; type?: SpannerTypeJson; pos: number }
  | { k: 'index'; base: Expr; index: Expr; mode: IndexMode; pos: number }
  | { k: 'extract'; part: string; e: Expr; pos: number }
  | { k: 'interval'; e: Expr; part: string; pos: number }
  | { k: 'default'; pos: number };

/** One ORDER BY item. */
export interface OrderItem {
  e: Expr;
  desc: boolean;
  nulls?: 'FIRST' | 'LAST';
}

/** One WITH clause entry. */
export interface Cte {
  name: string;
  query: Query;
}

/** A full query: WITH, a set expression, ORDER BY, LIMIT / OFFSET. */
export interface Query {
  k: 'query';
  with: Cte[];
  body: SetBody;
  orderBy: OrderItem[];
  limit?: Expr;
  offset?: Expr;
  pos: number;
}

/** The body of a query: a SELECT, a set operation, or a parenthesized query. */
export type SetBody =
  | Select
  | { k: 'setop'; op: 'UNION' | 'INTERSECT' | 'EXCEPT'; all: boolean; l: SetBody; r: SetBody; pos: number }
  | Query;

/** One SELECT list item. */
export type SelectItem =
  | { k: 'star'; qualifier?: Expr; except: string[]; replace: Array<{ e: Expr; alias: string }>; pos: number }
  | { k: 'item'; e: Expr; alias?: string; pos: number };

/** One SELECT. */
export interface Select {
  k: 'select';
  distinct: boolean;
  as?: 'STRUCT' | 'VALUE';
  items: SelectItem[];
  from?: From;
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
  pos: number;
}

/** Join kinds. */
export type JoinKind = 'INNER' | 'LEFT' | 'RIGHT' | 'FULL' | 'CROSS';

/** A FROM item. */
export type From =
  | { k: 'table'; path: string[]; alias?: string; pos: number }
  | { k: 'sub'; query: Query; alias?: string; pos: number }
  | { k: 'unnest'; e: Expr; alias?: string; offset?: string; pos: number }
  | { k: 'join'; kind: JoinKind; l: From; r: From; on?: Expr; using?: string[]; pos: number };

/** A DML statement. */
export type Dml =
  | {
      k: 'insert';
      table: string;
      columns: string[];
      values?: Expr[][];
      query?: Query;
      returning?: SelectItem[];
      pos: number;
    }
  | {
      k: 'update';
      table: string;
      alias?: string;
      set: Array<{ column: string; e: Expr; pos: number }>;
      where?: Expr;
      returning?: SelectItem[];
      pos: number;
    }
  | { k: 'delete'; table: string; alias?: string; where?: Expr; returning?: SelectItem[]; pos: number };
