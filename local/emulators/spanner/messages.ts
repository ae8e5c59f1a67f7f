/**
 * The write-path errors the emulator answers with, each with the status code and the message text of the
 * official Cloud Spanner emulator (GoogleCloudPlatform/cloud-spanner-emulator, `common/errors.cc`), so
 * code that classifies Spanner's answers (the writer's failure handling) is tested against the real
 * wording. Keys are printed as that emulator prints them: `{Int64(1), String("a")}`.
 */
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from './hooks';

const DEBUG_NAMES: Record<string, string> = {
  INT64: 'Int64',
  FLOAT64: 'Double',
  FLOAT32: 'Float',
  BOOL: 'Bool',
  STRING: 'String',
  BYTES: 'Bytes',
  DATE: 'Date',
  TIMESTAMP: 'Timestamp',
  NUMERIC: 'Numeric',
  JSON: 'Json',
  UUID: 'Uuid',
};

/** One key value as the official emulator's debug string shows it, e.g. `Int64(1)` or `String("a")`. */
export function debugValue(value: WireValue, type: SpannerTypeJson): string {
  if (value === null) return 'NULL';
  const name = DEBUG_NAMES[type.code] ?? type.code;
  if (type.code === 'STRING' || type.code === 'JSON') return `${name}(${JSON.stringify(value)})`;
  if (type.code === 'BYTES')
    return `${name}(b${JSON.stringify(Buffer.from(String(value), 'base64').toString('latin1'))})`;
  return `${name}(${Array.isArray(value) ? JSON.stringify(value) : String(value)})`;
}

/** A key as `{v1, v2}` from its wire values and their column types. */
export function debugKey(values: WireValue[], types: SpannerTypeJson[]): string {
  return `{${values.map((v, i) => debugValue(v, types[i] ?? { code: 'STRING' })).join(', ')}}`;
}

/** ALREADY_EXISTS: an insert of a key that exists. */
export function rowAlreadyExists(table: string, key: string): SpannerError {
  return new SpannerError(Code.ALREADY_EXISTS, `Table ${table}: Row ${key} already exists.`);
}

/** NOT_FOUND: an update of a key that does not exist. */
export function rowNotFound(table: string, key: string): SpannerError {
  return new SpannerError(Code.NOT_FOUND, `Table ${table}: Row ${key} not found.`);
}

/** NOT_FOUND: an interleaved child written without its parent row. */
export function parentKeyNotFound(parent: string, child: string, key: string): SpannerError {
  return new SpannerError(
    Code.NOT_FOUND,
    `Insert failed because key was not found in parent table:  Parent Table: ${parent}  Child Table: ${child}  Key: ${key}`,
  );
}

/** FAILED_PRECONDITION: an explicit NULL written to a NOT NULL column (`column` is `Table.Column`). */
export function nullValueForNotNullColumn(table: string, column: string): SpannerError {
  return new SpannerError(
    Code.FAILED_PRECONDITION,
    `Cannot specify a null value for column: ${column} in table: ${table}`,
  );
}

/** FAILED_PRECONDITION: a new row that leaves a NOT NULL column out. */
export function nonNullValueNotSpecified(table: string, column: string): SpannerError {
  return new SpannerError(
    Code.FAILED_PRECONDITION,
    `A new row in table ${table} does not specify a non-null value for NOT NULL column: ${column}`,
  );
}

/** FAILED_PRECONDITION: a STRING(n) / BYTES(n) value longer than n (`column` is `Table.Column`). */
export function valueExceedsLimit(column: string, size: number, limit: number): SpannerError {
  return new SpannerError(
    Code.FAILED_PRECONDITION,
    `New value exceeds the maximum size limit for this column: ${column}, size: ${size}, limit: ${limit}.`,
  );
}

/** A write against foreign key `fk` of table `referencing` on table `referenced`; `key` in debug form. */
export interface ForeignKeyViolation {
  fk: string;
  referencing: string;
  referenced: string;
  key: string;
}

/** FAILED_PRECONDITION: a referencing row whose referenced key does not exist. */
export function foreignKeyReferencedKeyNotFound(v: ForeignKeyViolation): SpannerError {
  return new SpannerError(
    Code.FAILED_PRECONDITION,
    `Foreign key \`${v.fk}\` constraint violation on table \`${v.referencing}\`. Cannot find referenced key \`${v.key}\` in table \`${v.referenced}\`.`,
  );
}

/** FAILED_PRECONDITION: a referenced row deleted (or its key changed) while a referencing row exists. */
export function foreignKeyReferencingKeyFound(v: ForeignKeyViolation): SpannerError {
  return new SpannerError(
    Code.FAILED_PRECONDITION,
    `Foreign key \`${v.fk}\` constraint violation when deleting or updating referenced key \`${v.key}\` in table \`${v.referenced}\`. A row with that key exists in the referencing table \`${v.referencing}\`.`,
  );
}

/** OUT_OF_RANGE (sic: that is the code Spanner uses): a row for which a CHECK constraint is false. */
export function checkConstraintViolated(check: string, table: string, key: string): SpannerError {
  return new SpannerError(
    Code.OUT_OF_RANGE,
    `Check constraint \`${table}\`.\`${check}\` is violated for key ${key}`,
  );
}

/** ALREADY_EXISTS: two rows with the same key of a unique index. */
export function uniqueIndexViolation(index: string, key: string): SpannerError {
  return new SpannerError(
    Code.ALREADY_EXISTS,
    `UNIQUE violation on index ${index},  duplicate key: ${key} in this transaction.`,
  );
}

/** The service's limit on mutations per commit (index entries included). */
export const MAX_MUTATIONS_PER_COMMIT = 80_000;

/** INVALID_ARGUMENT: a commit (or a batch write request) over the mutation limit, in the service's words. */
export function tooManyMutations(limit: number): SpannerError {
  return new SpannerError(
    Code.INVALID_ARGUMENT,
    'The transaction contains too many mutations. Insert and update operations count with the multiplicity ' +
      'of the number of columns they affect. For example, inserting values into one key column and four ' +
      'non-key columns count as five mutations total for the insert. Delete and delete range operations ' +
      'count as one mutation regardless of the number of columns affected. The total mutation count ' +
      'includes any changes to indexes that the transaction generates. Please reduce the number of writes, ' +
      `or use fewer indexes. (Maximum number: ${limit})`,
  );
}
