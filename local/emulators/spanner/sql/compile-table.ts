/**
 * Table references in FROM: WITH names, user tables (read through their snapshot CTE), INFORMATION_SCHEMA
 * views, tables of named schemas (`sch.T`), PostgreSQL's `public.` schema; SPANNER_SYS and pg_catalog are not emulated.
 */
import { Code, SpannerError } from '../hooks';
import { qi } from '../storage';
import type { From } from './ast';
import type { CompileCtx, Scope } from './scope';

function notFound(path: string[], cx: CompileCtx, pos: number): never {
  const name = path.join('.');
  return cx.fail(cx.pg ? `relation "${name}" does not exist` : `Table not found: ${name}`, pos);
}

/** Compiles a table reference, adding its range to `s`; returns its SQL. */
export function compileTable(f: From & { k: 'table' }, s: Scope, cx: CompileCtx): string {
  const path = f.path;
  const last = path[path.length - 1] as string;
  const alias = cx.fresh('r');
  const name = f.alias ?? last;
  if (path.length === 1) {
    const cte = s.cte(last);
    if (cte) {
      s.ranges.push({
        name,
        cols: cte.cols.map((c, i) => ({ name: c.name, type: c.type, sql: `${alias}."c${i}"` })),
      });
      return `${cte.sql} AS ${alias}`;
    }
  }
  const schemaName = path.length === 2 ? (path[0] as string).toUpperCase() : '';
  if (schemaName === 'SPANNER_SYS' || schemaName === 'PG_CATALOG')
    throw new SpannerError(Code.UNIMPLEMENTED, `The emulator does not support ${path[0]} tables`);
  if (path.length > 2) return notFound(path, cx, f.pos);
  if (schemaName === 'INFORMATION_SCHEMA') {
    const cols = cx.catalog.info?.columns(last);
    if (!cols) return notFound(path, cx, f.pos);
    s.ranges.push({ name, cols: cols.map((c) => ({ ...c, sql: `${alias}.${qi(c.name)}` })) });
    return `${cx.catalog.info?.sqlName(last)} AS ${alias}`;
  }
  // A table of a named schema is known by its qualified name `sch.T`; PostgreSQL's `public.t` is `t`.
  const qualified = schemaName && !(cx.pg && schemaName === 'PUBLIC') ? path.join('.') : last;
  const table = cx.catalog.schema.find(qualified);
  if (!table) return notFound(path, cx, f.pos);
  cx.tables.add(table.name.toLowerCase());
  s.ranges.push({
    name,
    // Hidden columns (TOKENLIST) are not in the table's snapshot CTE: not in `*`, not nameable.
    cols: table.columns
      .filter((c) => !c.hidden)
      .map((c) => ({ name: c.name, type: c.ct.type, sql: `${alias}.${qi(c.name)}` })),
  });
  return `${qi(table.name)} AS ${alias}`;
}
