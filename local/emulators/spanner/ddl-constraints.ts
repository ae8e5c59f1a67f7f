/**
 * Table constraints in CREATE TABLE, both dialects: `[CONSTRAINT name] FOREIGN KEY (cols) REFERENCES t (cols)
 * [ON DELETE NO ACTION] [NOT ENFORCED]` and `[CONSTRAINT name] CHECK (expr)`. ON DELETE CASCADE is refused
 * rather than half-emulated.
 */
import { Code, SpannerError } from './hooks';
import { readName } from './names';
import type { CheckConstraint, ForeignKey, Table } from './schema';
import { closingParen, type Dialect, identName, isOp, isWord, splitTopLevel, type Token } from './tokenizer';

/** True when a CREATE TABLE body element is a table constraint. */
export function isTableConstraint(part: Token[]): boolean {
  return isWord(part[0], 'CONSTRAINT') || isWord(part[0], 'FOREIGN') || isWord(part[0], 'CHECK');
}

function syntax(what: string): never {
  throw new SpannerError(Code.INVALID_ARGUMENT, `Error parsing Spanner DDL statement: ${what}`);
}

function parenNames(tokens: Token[], i: number, d: Dialect): [string[], number] {
  if (!isOp(tokens[i], '(')) syntax(`expected ( near ${tokens[i]?.value ?? 'end of statement'}`);
  const end = closingParen(tokens, i);
  return [splitTopLevel(tokens.slice(i + 1, end)).map((p) => identName(p[0], d)), end + 1];
}

function parseForeignKey(part: Token[], i: number, d: Dialect, name: string): ForeignKey {
  if (!isWord(part[i + 1], 'KEY')) syntax('expected FOREIGN KEY');
  const [columns, afterCols] = parenNames(part, i + 2, d);
  if (!isWord(part[afterCols], 'REFERENCES')) syntax('expected REFERENCES');
  const [referencedTable, afterTable] = readName(part, afterCols + 1, d);
  const [referencedColumns, after] = parenNames(part, afterTable, d);
  const fk: ForeignKey = { name, columns, referencedTable, referencedColumns, enforced: true };
  for (let j = after; j < part.length; j++) {
    if (isWord(part[j], 'ON') && isWord(part[j + 1], 'DELETE')) {
      if (isWord(part[j + 2], 'CASCADE'))
        throw new SpannerError(
          Code.UNIMPLEMENTED,
          'The emulator does not support FOREIGN KEY ON DELETE CASCADE',
        );
      j += 3; // NO ACTION
    } else if (isWord(part[j], 'NOT') && isWord(part[j + 1], 'ENFORCED')) {
      fk.enforced = false;
      j++;
    } else if (!isWord(part[j], 'ENFORCED')) syntax(`unexpected ${part[j]?.value} in FOREIGN KEY`);
  }
  if (columns.length === 0 || columns.length !== referencedColumns.length)
    syntax(`foreign key ${name} must name as many referencing as referenced columns`);
  return fk;
}

function parseCheck(part: Token[], i: number, name: string): CheckConstraint {
  if (!isOp(part[i + 1], '(')) syntax('expected ( after CHECK');
  const end = closingParen(part, i + 1);
  if (end !== part.length - 1) syntax(`unexpected ${part[end + 1]?.value} after CHECK (...)`);
  return { name, expression: part.slice(i + 2, end) };
}

/** Adds one table constraint (a body element for which {@link isTableConstraint} holds) to `table`. */
export function addTableConstraint(table: Table, part: Token[], d: Dialect): void {
  const named = isWord(part[0], 'CONSTRAINT');
  const at = named ? 2 : 0;
  const count = (table.foreignKeys?.length ?? 0) + (table.checks?.length ?? 0) + 1;
  if (isWord(part[at], 'FOREIGN')) {
    const name = named ? identName(part[1], d) : `FK_${table.name}_${count}`;
    table.foreignKeys = [...(table.foreignKeys ?? []), parseForeignKey(part, at, d, name)];
  } else if (isWord(part[at], 'CHECK')) {
    const name = named ? identName(part[1], d) : `CK_${table.name}_${count}`;
    table.checks = [...(table.checks ?? []), parseCheck(part, at, name)];
  } else syntax(`expected FOREIGN KEY or CHECK after CONSTRAINT ${part[1]?.value ?? ''}`);
}
