/**
 * How compiled SQL hands types to runtime functions: a type argument is the JSON text of a
 * `google.spanner.v1.Type`, parsed once; composite values are JSON texts of canonical wire values.
 */
import type Sqlite from 'better-sqlite3';
import type { WireValue } from '../hooks';
import type { SqlType } from './typing';

const types = new Map<string, SqlType>();

/** A type argument (JSON text) as a type. */
export function ty(json: unknown): SqlType {
  const key = String(json);
  let t = types.get(key);
  if (!t) {
    t = JSON.parse(key) as SqlType;
    types.set(key, t);
  }
  return t;
}

/** JSON text of canonical wire values (non-finite floats as strings, as Spanner sends them). */
export function encodeJson(w: WireValue[]): string {
  return JSON.stringify(w, (_k, v: unknown) =>
    typeof v === 'number' && !Number.isFinite(v) ? String(v) : v,
  );
}

/** An aggregate function: `step` folds one row's arguments into the accumulator. */
export interface AggregateSpec<A> {
  start: () => A;
  step: (acc: A, ...args: never[]) => A;
  result: (acc: A) => unknown;
}

/** Registers an aggregate with safe integers (better-sqlite3's typing cannot express varargs steps). */
export function defineAggregate<A>(db: Sqlite.Database, name: string, spec: AggregateSpec<A>): void {
  db.aggregate(name, { ...spec, deterministic: true, safeIntegers: true } as unknown as Parameters<
    Sqlite.Database['aggregate']
  >[1]);
}
