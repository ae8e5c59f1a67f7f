/**
 * Function signatures: argument patterns with a generic `T` (the arguments' supertype) and `N` (a numeric
 * supertype), optional trailing arguments and a repeated last one, matched in order as ZetaSQL does; the
 * error lists the supported signatures.
 */
import { convert } from './convert';
import type { CompileCtx } from './scope';
import { arrayOf, isNumeric, noSignature, type SqlType, supertype, type Typed, typeName } from './typing';

/** One argument's pattern: a concrete type, `T`, `ARRAY<T>`, `N` (numeric) or `ANY`. */
export type Arg = SqlType | 'T' | 'ARRAY<T>' | 'N' | 'ANY';

/** One signature of a function. */
export interface Sig {
  args: Arg[];
  /** Number of trailing arguments that may be omitted. */
  optional?: number;
  /** The last argument may repeat. */
  repeated?: boolean;
  ret: SqlType | 'T' | 'ARRAY<T>' | 'N' | ((args: Typed[]) => SqlType);
  /** SQL from the converted arguments' SQL. */
  sql: (a: string[], args: Typed[]) => string;
  agg?: boolean;
}

function argAt(sig: Sig, i: number): Arg | undefined {
  if (i < sig.args.length) return sig.args[i];
  return sig.repeated ? sig.args[sig.args.length - 1] : undefined;
}

function generic(args: Typed[], sig: Sig, which: 'T' | 'N', cx: CompileCtx): SqlType | undefined | null {
  const pool: Typed[] = [];
  args.forEach((a, i) => {
    const p = argAt(sig, i);
    if (p === which) pool.push(a);
    if (which === 'T' && p === 'ARRAY<T>' && a.type.code === 'ARRAY')
      pool.push({ ...a, type: a.type.arrayElementType as SqlType });
  });
  if (pool.length === 0) return null;
  const t = supertype(pool, cx.dialect);
  if (which === 'N' && t && !isNumeric(t)) return undefined;
  return t;
}

function target(
  p: Arg,
  t: SqlType | null | undefined,
  n: SqlType | null | undefined,
): SqlType | 'ANY' | undefined {
  if (p === 'ANY') return 'ANY';
  if (p === 'T') return t ?? undefined;
  if (p === 'N') return n ?? undefined;
  if (p === 'ARRAY<T>') return t ? arrayOf(t) : undefined;
  return p;
}

/** Tries one signature; the converted arguments or undefined. */
function tryMatch(sig: Sig, args: Typed[], cx: CompileCtx): Typed[] | undefined {
  const min = sig.args.length - (sig.optional ?? 0);
  if (args.length < min || (!sig.repeated && args.length > sig.args.length)) return undefined;
  const t = generic(args, sig, 'T', cx);
  const n = generic(args, sig, 'N', cx);
  if (t === undefined || n === undefined) return undefined;
  const out: Typed[] = [];
  for (const [i, a] of args.entries()) {
    const to = target(argAt(sig, i) as Arg, t, n);
    if (!to) return undefined;
    if (to === 'ANY') {
      out.push(a);
      continue;
    }
    if (to.code === 'ARRAY' && a.type.code !== 'ARRAY' && !(a.flex === 'null' || a.flex === 'param'))
      return undefined;
    const c = convert(a, to, cx);
    if (!c) return undefined;
    out.push(c);
  }
  return out;
}

function retType(sig: Sig, args: Typed[], cx: CompileCtx): SqlType {
  const r = sig.ret;
  if (typeof r === 'function') return r(args);
  if (r === 'T' || r === 'N') return (generic(args, sig, r, cx) as SqlType | null) ?? (args[0] as Typed).type;
  if (r === 'ARRAY<T>')
    return arrayOf((generic(args, sig, 'T', cx) as SqlType | null) ?? (args[0] as Typed).type);
  return r;
}

function describe(name: string, sig: Sig, cx: CompileCtx): string {
  const label = (a: Arg) =>
    typeof a === 'string' ? (a === 'N' ? 'INT64' : a === 'T' ? 'ANY' : a) : typeName(a, cx.dialect);
  const parts = sig.args.map((a, i) => {
    const l = label(a);
    return i >= sig.args.length - (sig.optional ?? 0)
      ? `[${l}]`
      : sig.repeated && i === sig.args.length - 1
        ? `[${l}, ...]`
        : l;
  });
  return `${name}(${parts.join(', ')})`;
}

/** Matches `args` against `sigs` (first match wins) and builds the call, or throws "No matching signature". */
export function applySignatures(
  name: string,
  sigs: Sig[],
  args: Typed[],
  cx: CompileCtx,
  pos: number,
): Typed {
  for (const sig of sigs) {
    const conv = tryMatch(sig, args, cx);
    if (!conv) continue;
    const type = retType(sig, conv, cx);
    return {
      sql: sig.sql(
        conv.map((c) => c.sql),
        conv,
      ),
      type,
      agg: sig.agg || args.some((a) => a.agg),
    };
  }
  const supported = sigs.map((s) => describe(name, s, cx)).join('; ');
  return noSignature(
    `function ${name}`,
    args.map((a) => a.type),
    supported,
    cx.dialect,
    cx.at(pos),
  );
}
