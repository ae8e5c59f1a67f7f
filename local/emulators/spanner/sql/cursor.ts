/**
 * A cursor over the tokens of one statement, with the error forms of the service: GoogleSQL names the place
 * as `[at line:column]`, PostgreSQL says `syntax error at or near "x"`.
 */
import { Code, SpannerError } from '../hooks';
import { type Dialect, type Token, tokenize } from '../tokenizer';

/** `[at line:column]` for an offset of `src` (1-based, as ZetaSQL prints it). */
export function at(src: string, pos: number): string {
  if (pos < 0) return '';
  const before = src.slice(0, pos).split('\n');
  return ` [at ${before.length}:${(before[before.length - 1]?.length ?? 0) + 1}]`;
}

/** Words that never start an implicit alias. */
const RESERVED = new Set(
  (
    'ALL AND ANY ARRAY AS ASC BETWEEN BY CASE CAST CROSS DESC DISTINCT ELSE END EXCEPT EXISTS FALSE FETCH FOR ' +
    'FROM FULL GROUP HAVING IN INNER INTERSECT INTO IS JOIN LEFT LIKE LIMIT NOT NULL NULLS OFFSET ON OR ORDER ' +
    'OUTER RETURNING RIGHT SELECT SET STRUCT THEN TRUE UNION UNNEST USING WHEN WHERE WINDOW WITH'
  ).split(' '),
);

/** Reads tokens in order; every `expect…` failure is a syntax error naming the place. */
export class Cursor {
  i = 0;
  readonly toks: Token[];

  constructor(
    readonly src: string,
    readonly dialect: Dialect,
    tokens?: Token[],
  ) {
    // Hints (`@{...}`) change plans, never results: they are dropped wherever they appear.
    this.toks = (tokens ?? tokenize(src, dialect)).filter((t) => t.kind !== 'hint');
  }

  get pg(): boolean {
    return this.dialect === 'POSTGRESQL';
  }

  peek(n = 0): Token | undefined {
    return this.toks[this.i + n];
  }

  pos(): number {
    return this.peek()?.pos ?? this.src.length;
  }

  done(): boolean {
    return this.i >= this.toks.length;
  }

  next(): Token {
    const t = this.peek();
    if (!t) return this.fail('Unexpected end of statement');
    this.i++;
    return t;
  }

  /** True when the token `n` ahead is the unquoted keyword `w`. */
  isWord(w: string, n = 0): boolean {
    const t = this.peek(n);
    return t?.kind === 'ident' && t.value.toUpperCase() === w;
  }

  isOp(o: string, n = 0): boolean {
    const t = this.peek(n);
    return t?.kind === 'op' && t.value === o;
  }

  eatWord(w: string): boolean {
    if (!this.isWord(w)) return false;
    this.i++;
    return true;
  }

  eatOp(o: string): boolean {
    if (!this.isOp(o)) return false;
    this.i++;
    return true;
  }

  expectWord(w: string): void {
    if (!this.eatWord(w)) this.fail(`Expected keyword ${w}`);
  }

  expectOp(o: string): void {
    if (!this.eatOp(o)) this.fail(`Expected "${o}"`);
  }

  /** An identifier (quoted or not); PostgreSQL folds unquoted names to lower case. */
  ident(): string {
    const t = this.peek();
    if (t?.kind === 'qident') {
      this.i++;
      return t.value;
    }
    if (t?.kind === 'ident') {
      this.i++;
      return this.pg ? t.value.toLowerCase() : t.value;
    }
    return this.fail('Expected an identifier');
  }

  /** True when the next token can be an implicit alias. */
  aliasNext(): boolean {
    const t = this.peek();
    return t?.kind === 'qident' || (t?.kind === 'ident' && !RESERVED.has(t.value.toUpperCase()));
  }

  /** `[AS] alias`, or undefined. */
  alias(): string | undefined {
    if (this.eatWord('AS')) return this.ident();
    return this.aliasNext() ? this.ident() : undefined;
  }

  /** Throws INVALID_ARGUMENT in the dialect's syntax-error form. */
  fail(message: string, pos = this.pos()): never {
    const t = this.toks.find((x) => x.pos === pos);
    if (this.pg)
      throw new SpannerError(
        Code.INVALID_ARGUMENT,
        t ? `syntax error at or near "${t.value}"` : 'syntax error at end of input',
      );
    const near = t ? `; found "${t.value}"` : '; unexpected end of statement';
    throw new SpannerError(Code.INVALID_ARGUMENT, `Syntax error: ${message}${near}${at(this.src, pos)}`);
  }
}
