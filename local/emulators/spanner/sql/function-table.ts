/**
 * The functions the emulator evaluates, by GoogleSQL name, with their signatures and SQL. PostgreSQL names
 * that mean the same map onto them. A function not listed here is "Function not found", never guessed.
 */
import { ql } from '../storage';
import { typeArg } from './convert';
import type { Sig } from './signatures';
import { arrayOf, type SqlType, T, type Typed } from './typing';

const fn = (name: string) => (a: string[]) => `${name}(${a.join(', ')})`;
const STR_OR_BYTES = (name: string, ret?: SqlType): Sig[] => [
  { args: [T.STRING], ret: ret ?? T.STRING, sql: fn(name) },
  { args: [T.BYTES], ret: ret ?? T.BYTES, sql: fn(name) },
];
const float1 = (name: string): Sig[] => [{ args: [T.FLOAT64], ret: T.FLOAT64, sql: fn(name) }];
const typeOf = (args: Typed[], i = 0) => (args[i] as Typed).type;
const round = (mode: string): Sig[] =>
  (['INT64', 'NUMERIC', 'FLOAT64'] as const).map((code) => ({
    args: [{ code }, T.INT64],
    optional: 1,
    ret: code === 'INT64' && mode === 'ROUND' ? T.FLOAT64 : { code },
    sql: (a: string[]) =>
      `sp_round(${code === 'INT64' && mode === 'ROUND' ? `CAST(${a[0]} AS REAL)` : a[0]}, ${a[1] ?? 0}, ${typeArg({ code: code === 'INT64' && mode === 'ROUND' ? 'FLOAT64' : code })}, ${ql(mode)})`,
  }));

/**
 * GREATEST / LEAST over one or more values of one type: NUMERIC (stored as text) by its sort key in `order`,
 * any other type through SQLite's `sqlite` (`max` / `min`).
 */
const extremum = (order: ' DESC' | '', sqlite: 'max' | 'min'): Sig[] => [
  {
    args: ['T'],
    repeated: true,
    ret: 'T',
    sql: (a, x) =>
      typeOf(x).code === 'NUMERIC'
        ? `(SELECT v FROM (SELECT ${a.map((s) => `${s} AS v`).join(' UNION ALL SELECT ')}) ORDER BY sp_nkey(v)${order} LIMIT 1)`
        : a.length === 1
          ? (a[0] as string)
          : `${sqlite}(${a.join(', ')})`,
  },
];

const AGGREGATES: Record<string, Sig[]> = {
  SUM: [
    { args: [T.INT64], ret: T.INT64, sql: fn('sum'), agg: true },
    {
      args: [T.NUMERIC],
      ret: (a) => typeOf(a),
      sql: (a, x) => `sp_sum(${typeArg(typeOf(x))}, ${a[0]})`,
      agg: true,
    },
    { args: [T.FLOAT64], ret: T.FLOAT64, sql: (a) => `sp_sum(${typeArg(T.FLOAT64)}, ${a[0]})`, agg: true },
  ],
  AVG: [
    { args: [T.INT64], ret: T.FLOAT64, sql: fn('avg'), agg: true },
    { args: [T.NUMERIC], ret: (a) => typeOf(a), sql: fn('sp_avg'), agg: true },
    { args: [T.FLOAT64], ret: T.FLOAT64, sql: fn('avg'), agg: true },
  ],
  MIN: [
    {
      args: ['T'],
      ret: 'T',
      sql: (a, x) => (typeOf(x).code === 'NUMERIC' ? `sp_nmin(${a[0]})` : `min(${a[0]})`),
      agg: true,
    },
  ],
  MAX: [
    {
      args: ['T'],
      ret: 'T',
      sql: (a, x) => (typeOf(x).code === 'NUMERIC' ? `sp_nmax(${a[0]})` : `max(${a[0]})`),
      agg: true,
    },
  ],
  COUNTIF: [{ args: [T.BOOL], ret: T.INT64, sql: (a) => `count(CASE WHEN ${a[0]} THEN 1 END)`, agg: true }],
  LOGICAL_AND: [{ args: [T.BOOL], ret: T.BOOL, sql: fn('min'), agg: true }],
  LOGICAL_OR: [{ args: [T.BOOL], ret: T.BOOL, sql: fn('max'), agg: true }],
  ANY_VALUE: [{ args: ['T'], ret: 'T', sql: fn('min'), agg: true }],
};

const STRINGS: Record<string, Sig[]> = {
  CONCAT: [
    { args: [T.STRING], repeated: true, ret: T.STRING, sql: fn('sp_concat') },
    { args: [T.BYTES], repeated: true, ret: T.BYTES, sql: fn('sp_concat') },
  ],
  LENGTH: STR_OR_BYTES('length', T.INT64),
  CHAR_LENGTH: [{ args: [T.STRING], ret: T.INT64, sql: fn('length') }],
  CHARACTER_LENGTH: [{ args: [T.STRING], ret: T.INT64, sql: fn('length') }],
  BYTE_LENGTH: [
    { args: [T.STRING], ret: T.INT64, sql: (a) => `length(CAST(${a[0]} AS BLOB))` },
    { args: [T.BYTES], ret: T.INT64, sql: fn('length') },
  ],
  LOWER: STR_OR_BYTES('sp_lower'),
  UPPER: STR_OR_BYTES('sp_upper'),
  SUBSTR: [
    { args: [T.STRING, T.INT64, T.INT64], optional: 1, ret: T.STRING, sql: fn('sp_substr') },
    { args: [T.BYTES, T.INT64, T.INT64], optional: 1, ret: T.BYTES, sql: fn('sp_substr') },
  ],
  TRIM: [
    { args: [T.STRING, T.STRING], optional: 1, ret: T.STRING, sql: (a) => `sp_trim('B', ${a.join(', ')})` },
  ],
  LTRIM: [
    { args: [T.STRING, T.STRING], optional: 1, ret: T.STRING, sql: (a) => `sp_trim('L', ${a.join(', ')})` },
  ],
  RTRIM: [
    { args: [T.STRING, T.STRING], optional: 1, ret: T.STRING, sql: (a) => `sp_trim('R', ${a.join(', ')})` },
  ],
  REPLACE: [{ args: [T.STRING, T.STRING, T.STRING], ret: T.STRING, sql: fn('replace') }],
  STRPOS: [{ args: [T.STRING, T.STRING], ret: T.INT64, sql: fn('sp_strpos') }],
  STARTS_WITH: [{ args: [T.STRING, T.STRING], ret: T.BOOL, sql: fn('spanner_starts_with') }],
  ENDS_WITH: [{ args: [T.STRING, T.STRING], ret: T.BOOL, sql: fn('spanner_ends_with') }],
  LPAD: [
    {
      args: [T.STRING, T.INT64, T.STRING],
      optional: 1,
      ret: T.STRING,
      sql: (a) => `sp_pad(${a[0]}, ${a[1]}, ${a[2] ?? "' '"}, 1)`,
    },
  ],
  RPAD: [
    {
      args: [T.STRING, T.INT64, T.STRING],
      optional: 1,
      ret: T.STRING,
      sql: (a) => `sp_pad(${a[0]}, ${a[1]}, ${a[2] ?? "' '"}, 0)`,
    },
  ],
  REPEAT: [{ args: [T.STRING, T.INT64], ret: T.STRING, sql: fn('sp_repeat') }],
  REVERSE: STR_OR_BYTES('sp_reverse'),
  SPLIT: [{ args: [T.STRING, T.STRING], optional: 1, ret: arrayOf(T.STRING), sql: fn('sp_split') }],
  REGEXP_CONTAINS: [{ args: [T.STRING, T.STRING], ret: T.BOOL, sql: fn('sp_regexp_contains') }],
  REGEXP_EXTRACT: [{ args: [T.STRING, T.STRING], ret: T.STRING, sql: fn('sp_regexp_extract') }],
  REGEXP_REPLACE: [{ args: [T.STRING, T.STRING, T.STRING], ret: T.STRING, sql: fn('sp_regexp_replace') }],
  TO_HEX: [{ args: [T.BYTES], ret: T.STRING, sql: (a) => `lower(hex(${a[0]}))` }],
  FROM_HEX: [{ args: [T.STRING], ret: T.BYTES, sql: fn('unhex') }],
  TO_BASE64: [{ args: [T.BYTES], ret: T.STRING, sql: fn('sp_to_base64') }],
  FROM_BASE64: [{ args: [T.STRING], ret: T.BYTES, sql: fn('sp_from_base64') }],
  JSON_VALUE: [
    {
      args: [T.JSON, T.STRING],
      optional: 1,
      ret: T.STRING,
      sql: (a) => `sp_json_value(${a[0]}, ${a[1] ?? "'$'"})`,
    },
  ],
  JSON_QUERY: [
    {
      args: [T.JSON, T.STRING],
      optional: 1,
      ret: T.JSON,
      sql: (a) => `sp_json_query(${a[0]}, ${a[1] ?? "'$'"})`,
    },
  ],
  PARSE_JSON: [
    {
      args: [T.STRING],
      ret: T.JSON,
      sql: (a) => `sp_cast(${a[0]}, ${typeArg(T.STRING)}, ${typeArg(T.JSON)}, 0)`,
    },
  ],
};

const MATH: Record<string, Sig[]> = {
  ABS: [
    {
      args: ['N'],
      ret: 'N',
      sql: (a, x) =>
        typeOf(x).code === 'INT64'
          ? `sp_arith('*', ${typeArg(T.INT64)}, ${a[0]}, sign(${a[0]}))`
          : `(CASE WHEN ${a[0]} = 'NaN' THEN 'NaN' WHEN ${typeOf(x).code === 'NUMERIC' ? `sp_nkey(${a[0]}) < 'O'` : `${a[0]} < 0`} THEN sp_neg(${typeArg(typeOf(x))}, ${a[0]}) ELSE ${a[0]} END)`,
    },
  ],
  SIGN: [
    {
      args: ['N'],
      ret: 'N',
      sql: (a, x) =>
        typeOf(x).code === 'NUMERIC' ? `CAST(sign(CAST(${a[0]} AS REAL)) AS TEXT)` : `sign(${a[0]})`,
    },
  ],
  ROUND: round('ROUND'),
  TRUNC: round('TRUNC'),
  CEIL: round('CEIL').map((s) => ({ ...s, args: s.args.slice(0, 1), optional: 0 })),
  FLOOR: round('FLOOR').map((s) => ({ ...s, args: s.args.slice(0, 1), optional: 0 })),
  SQRT: float1('sp_sqrt'),
  EXP: float1('sp_exp'),
  LN: float1('sp_ln'),
  LOG10: float1('sp_log10'),
  LOG: [
    { args: [T.FLOAT64], ret: T.FLOAT64, sql: fn('sp_ln') },
    {
      args: [T.FLOAT64, T.FLOAT64],
      ret: T.FLOAT64,
      sql: (a) => `sp_ieee_divide(sp_ln(${a[0]}), sp_ln(${a[1]}))`,
    },
  ],
  POW: [{ args: [T.FLOAT64, T.FLOAT64], ret: T.FLOAT64, sql: fn('sp_pow') }],
  MOD: [
    {
      args: [T.INT64, T.INT64],
      ret: T.INT64,
      sql: (a) => `sp_arith('MOD', ${typeArg(T.INT64)}, ${a.join(', ')})`,
    },
    {
      args: [T.NUMERIC, T.NUMERIC],
      ret: T.NUMERIC,
      sql: (a) => `sp_arith('MOD', ${typeArg(T.NUMERIC)}, ${a.join(', ')})`,
    },
  ],
  DIV: [
    {
      args: [T.INT64, T.INT64],
      ret: T.INT64,
      sql: (a) => `sp_arith('DIV', ${typeArg(T.INT64)}, ${a.join(', ')})`,
    },
  ],
  IEEE_DIVIDE: [{ args: [T.FLOAT64, T.FLOAT64], ret: T.FLOAT64, sql: fn('sp_ieee_divide') }],
  SAFE_DIVIDE: [
    {
      args: [T.FLOAT64, T.FLOAT64],
      ret: T.FLOAT64,
      sql: (a) => `(CASE WHEN ${a[1]} = 0 THEN NULL ELSE sp_ieee_divide(${a.join(', ')}) END)`,
    },
  ],
  IS_NAN: [{ args: [T.FLOAT64], ret: T.BOOL, sql: fn('sp_is_nan') }],
  IS_INF: [{ args: [T.FLOAT64], ret: T.BOOL, sql: fn('sp_is_inf') }],
  GREATEST: extremum(' DESC', 'max'),
  LEAST: extremum('', 'min'),
};

const CONDITIONAL: Record<string, Sig[]> = {
  IF: [
    { args: [T.BOOL, 'T', 'T'], ret: 'T', sql: (a) => `(CASE WHEN ${a[0]} THEN ${a[1]} ELSE ${a[2]} END)` },
  ],
  IFNULL: [{ args: ['T', 'T'], ret: 'T', sql: fn('ifnull') }],
  NULLIF: [{ args: ['T', 'T'], ret: 'T', sql: fn('nullif') }],
  COALESCE: [
    {
      args: ['T'],
      repeated: true,
      ret: 'T',
      sql: (a) => (a.length === 1 ? (a[0] as string) : `coalesce(${a.join(', ')})`),
    },
  ],
};

const ARRAYS: Record<string, Sig[]> = {
  ARRAY_LENGTH: [{ args: ['ARRAY<T>'], ret: T.INT64, sql: (a) => `sp_array_length(${a[0]})` }],
  ARRAY_TO_STRING: [
    {
      args: [arrayOf(T.STRING), T.STRING, T.STRING],
      optional: 1,
      ret: T.STRING,
      sql: fn('sp_array_to_string'),
    },
  ],
  ARRAY_CONCAT: [{ args: ['ARRAY<T>'], repeated: true, ret: 'ARRAY<T>', sql: fn('sp_array_concat') }],
  ARRAY_REVERSE: [{ args: ['ARRAY<T>'], ret: 'ARRAY<T>', sql: fn('sp_array_reverse') }],
  GENERATE_ARRAY: [
    { args: [T.INT64, T.INT64, T.INT64], optional: 1, ret: arrayOf(T.INT64), sql: fn('sp_generate_array') },
  ],
};

const TIME: Record<string, Sig[]> = {
  CURRENT_TIMESTAMP: [{ args: [], ret: T.TIMESTAMP, sql: () => 'spanner_now()' }],
  CURRENT_DATE: [{ args: [], ret: T.DATE, sql: () => 'sp_current_date()' }],
  PENDING_COMMIT_TIMESTAMP: [{ args: [], ret: T.TIMESTAMP, sql: () => 'spanner_pending_commit_timestamp()' }],
  UNIX_SECONDS: [{ args: [T.TIMESTAMP], ret: T.INT64, sql: (a) => `sp_unix(${a[0]}, 'SECOND')` }],
  UNIX_MILLIS: [{ args: [T.TIMESTAMP], ret: T.INT64, sql: (a) => `sp_unix(${a[0]}, 'MILLISECOND')` }],
  UNIX_MICROS: [{ args: [T.TIMESTAMP], ret: T.INT64, sql: (a) => `sp_unix(${a[0]}, 'MICROSECOND')` }],
  TIMESTAMP_SECONDS: [{ args: [T.INT64], ret: T.TIMESTAMP, sql: (a) => `sp_from_unix(${a[0]}, 'SECOND')` }],
  TIMESTAMP_MILLIS: [
    { args: [T.INT64], ret: T.TIMESTAMP, sql: (a) => `sp_from_unix(${a[0]}, 'MILLISECOND')` },
  ],
  TIMESTAMP_MICROS: [
    { args: [T.INT64], ret: T.TIMESTAMP, sql: (a) => `sp_from_unix(${a[0]}, 'MICROSECOND')` },
  ],
  UNIX_DATE: [{ args: [T.DATE], ret: T.INT64, sql: fn('sp_unix_date') }],
  DATE_FROM_UNIX_DATE: [{ args: [T.INT64], ret: T.DATE, sql: fn('sp_date_from_unix') }],
  DATE: [
    { args: [T.TIMESTAMP], ret: T.DATE, sql: (a) => `sp_extract('DATE', ${a[0]}, 1)` },
    { args: [T.INT64, T.INT64, T.INT64], ret: T.DATE, sql: fn('sp_date_from_parts') },
  ],
  TIMESTAMP: [
    {
      args: [T.STRING],
      ret: T.TIMESTAMP,
      sql: (a) => `sp_cast(${a[0]}, ${typeArg(T.STRING)}, ${typeArg(T.TIMESTAMP)}, 0)`,
    },
    {
      args: [T.DATE],
      ret: T.TIMESTAMP,
      sql: (a) => `sp_cast(${a[0]}, ${typeArg(T.DATE)}, ${typeArg(T.TIMESTAMP)}, 0)`,
    },
  ],
};

/** Every function by GoogleSQL name. */
export const FUNCTIONS: Record<string, Sig[]> = {
  ...AGGREGATES,
  ...STRINGS,
  ...MATH,
  ...CONDITIONAL,
  ...ARRAYS,
  ...TIME,
  SUBSTRING: STRINGS.SUBSTR as Sig[],
  POWER: MATH.POW as Sig[],
  CEILING: MATH.CEIL as Sig[],
};

/** PostgreSQL names → the GoogleSQL function with the same meaning. */
export const PG_ALIASES: Record<string, string> = {
  NOW: 'CURRENT_TIMESTAMP',
  'SPANNER.PENDING_COMMIT_TIMESTAMP': 'PENDING_COMMIT_TIMESTAMP',
  TEXTCAT: 'CONCAT',
  BOOL_AND: 'LOGICAL_AND',
  BOOL_OR: 'LOGICAL_OR',
};
