/**
 * Values and rows BigQuery cannot hold at all: permanent errors naming what and where, never a silent
 * truncation or a NULL written instead (ADR-1403). Each is a {@link SluiceError} of kind `permanent`, so a
 * window or backfill partition meeting one fails loudly (status, logs) rather than retrying; a policy that
 * sets such records aside can recognise them by class.
 */
import { SluiceError } from './errors';

/** What cannot be held: one value of a column, or a whole row larger than an append request may carry. */
export type Unrepresentable = 'value' | 'row-too-large';

/** A value (or row) of a source table that its BigQuery destination cannot hold. */
export class UnrepresentableError extends SluiceError {
  override readonly name: string = 'UnrepresentableError';
  readonly reason: Unrepresentable;
  /** `Table.Column` of the value (or the table, for a row). */
  readonly where: string;

  /** For a row of a batch: its index in the batch (the bad-record policy sets that row's record aside). */
  readonly rowIndex: number | undefined;

  constructor(reason: Unrepresentable, where: string, detail: string, rowIndex?: number) {
    super('permanent', `${where}: ${detail}`);
    this.reason = reason;
    this.where = where;
    this.rowIndex = rowIndex;
  }
}
