/**
 * What the in-memory Spanner catalogs of the application tests answer alike: a GoogleSQL database whose
 * change stream watches every table with `NEW_ROW` capture, a day's retention and immutable key ranges (the
 * stream the local stack creates). A catalog extends `AllTablesCatalog` and adds its schemas and rows.
 */
import type { ChangeStreamOptions, ChangeStreamScope } from '../../../shared/domain/information-schema';

/** The options of a stream `FOR ALL` with `value_capture_type = 'NEW_ROW'` and a 1-day retention. */
export const ALL_TABLES_STREAM_OPTIONS: ChangeStreamOptions = {
  valueCaptureType: 'NEW_ROW',
  retentionSeconds: 86_400,
  partitionMode: 'IMMUTABLE_KEY_RANGE',
  raw: {},
};

/** The dialect and stream answers of a catalog; its subclass adds `tableSchema`, `readRowsAt`, …. */
export abstract class AllTablesCatalog {
  async dialect() {
    return 'GOOGLE_STANDARD_SQL' as const;
  }
  async streamScope(): Promise<ChangeStreamScope | undefined> {
    return { all: true, tables: new Map() };
  }
  async streamOptions(): Promise<ChangeStreamOptions> {
    return { ...ALL_TABLES_STREAM_OPTIONS };
  }
}

/** A nullable column of a `TableSchema` by its type code and ordinal position. */
export const schemaColumn = (name: string, code: string, ordinalPosition: number) => ({
  name,
  type: { code },
  nullable: true,
  ordinalPosition,
});
