/**
 * Column default values (`defaultValueExpression`) and the Storage Write API's missing-value
 * interpretations: a column missing from a row is NULL unless the request asks for DEFAULT_VALUE (for all
 * columns or for that one), in which case its default expression is evaluated for the row.
 */
import { randomUUID } from 'node:crypto';
import { formatTimestamp, fromNanos } from '../../../shared/domain/timestamp';
import type { Field } from './schema';
import { fromProtoValue, type Value, ValueError } from './values';

/** The request fields that decide what a missing value means. */
export interface MissingValues {
  missingValueInterpretations?: Record<string, string>;
  defaultMissingValueInterpretation?: string;
}

type Evaluator = () => unknown;

const FUNCTIONS: Record<string, Evaluator> = {
  'CURRENT_TIMESTAMP()': () => formatTimestamp(fromNanos(BigInt(Date.now()) * 1_000_000n)),
  'CURRENT_DATE()': () => new Date().toISOString().slice(0, 10),
  'CURRENT_DATETIME()': () => new Date().toISOString().slice(0, 23),
  'CURRENT_TIME()': () => new Date().toISOString().slice(11, 23),
  'GENERATE_UUID()': () => randomUUID(),
  'SESSION_USER()': () => 'emulator@localhost',
};

/** The evaluator of a default expression, or undefined when the emulator cannot evaluate it. */
function evaluator(expression: string): Evaluator | undefined {
  const e = expression.trim();
  const fn = FUNCTIONS[e.toUpperCase().replace(/\s+/g, '')];
  if (fn) return fn;
  if (/^null$/i.test(e)) return () => null;
  if (/^(true|false)$/i.test(e)) return () => e.toLowerCase() === 'true';
  if (/^[+-]?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(e)) return () => e;
  const str = /^(['"])((?:\\.|(?!\1).)*)\1$/.exec(e);
  if (str) return () => (str[2] as string).replace(/\\(.)/g, '$1');
  const typed = /^(DATE|TIMESTAMP|DATETIME|NUMERIC|JSON)\s+(['"])(.*)\2$/i.exec(e);
  if (typed) return () => typed[3];
  return undefined;
}

/** Checks at table creation that every default expression can be evaluated (loud, not at first write). */
export function checkDefaults(fields: Field[]): void {
  for (const f of fields) {
    if (f.defaultValueExpression !== undefined && !evaluator(f.defaultValueExpression))
      throw new Error(
        `Default value expression of column ${f.name} is not supported by the emulator: ${f.defaultValueExpression} ` +
          '(supported: literals, CURRENT_TIMESTAMP(), CURRENT_DATE(), CURRENT_DATETIME(), CURRENT_TIME(), GENERATE_UUID())',
      );
    if (f.fields) checkDefaults(f.fields);
  }
}

/** How a missing value of `field` is interpreted by this request. */
function interpretation(field: Field, mv: MissingValues): string {
  const own = mv.missingValueInterpretations?.[field.name];
  if (own && own !== 'MISSING_VALUE_INTERPRETATION_UNSPECIFIED') return own;
  return mv.defaultMissingValueInterpretation ?? 'NULL_VALUE';
}

/** The value of a column the row did not carry. */
export function missingValue(field: Field, mv: MissingValues): Value {
  if (interpretation(field, mv) !== 'DEFAULT_VALUE' || field.defaultValueExpression === undefined)
    return null;
  const ev = evaluator(field.defaultValueExpression);
  if (!ev) throw new ValueError(`Cannot evaluate the default value of ${field.name}`);
  return fromProtoValue(ev(), field);
}
