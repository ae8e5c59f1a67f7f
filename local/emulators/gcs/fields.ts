/**
 * Partial responses (`fields=`): `a,b/c,items(name,generation)` keeps only the named parts of a JSON reply,
 * as every JSON API method does.
 */
import { invalid } from './errors';

/** A parsed selection: each key maps to its own sub-selection (`true` keeps the whole value). */
export type Selection = Map<string, Selection | true>;

function merge(into: Selection, key: string, sub: Selection | true): void {
  const prev = into.get(key);
  if (prev === true || sub === true) into.set(key, true);
  else if (prev) for (const [k, v] of sub) merge(prev, k, v);
  else into.set(key, sub);
}

/** Parses a `fields` expression. */
export function parseFields(text: string): Selection {
  let i = 0;
  const list = (): Selection => {
    const out: Selection = new Map();
    for (;;) {
      const m = /^[A-Za-z0-9_*]+(?:\/[A-Za-z0-9_*]+)*/.exec(text.slice(i));
      if (!m) throw invalid(`Invalid field selection ${text}`);
      i += m[0].length;
      const path = m[0].split('/');
      let sub: Selection | true = true;
      if (text[i] === '(') {
        i++;
        sub = list();
        if (text[i] !== ')') throw invalid(`Invalid field selection ${text}`);
        i++;
      }
      for (const key of path.slice(1).reverse()) sub = new Map([[key, sub]]);
      merge(out, path[0] as string, sub);
      if (text[i] !== ',') return out;
      i++;
    }
  };
  const out = list();
  if (i !== text.length) throw invalid(`Invalid field selection ${text}`);
  return out;
}

/** Keeps the selected parts of a JSON value (arrays select inside each element). */
export function selectFields(value: unknown, sel: Selection): unknown {
  if (Array.isArray(value)) return value.map((v) => selectFields(v, sel));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, sub] of sel) {
    if (k === '*') return value;
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined) out[k] = sub === true ? v : selectFields(v, sub);
  }
  return out;
}
