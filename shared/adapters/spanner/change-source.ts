/**
 * `ChangeSource` on Cloud Spanner: one window query on one partition in a single-use strong read-only
 * transaction (change-stream queries accept no other bound), its rows read in wire form (`gapic-stream.ts`,
 * ADR-1404) and decoded into records in the order Spanner returns them: no client value objects between.
 */
import type { Database } from '@google-cloud/spanner';
import type { ChangeRecord, Dialect } from '../../domain/change-record';
import { DecodeError, decodeGoogleSqlRow, decodePostgresRow } from '../../domain/change-record-decode';
import { changeStreamQuery, parseStreamName, type StreamName } from '../../domain/change-stream-query';
import type { ChangeQuery, ChangeSource } from '../../ports/change-source';
import { wireQueryRows } from './gapic-stream';
import { apiPriority, type Priority } from './request-options';
import { type ResultField, structurerOf, type WireValue } from './wire-rows';

/** Options of {@link SpannerChangeSource}. */
export interface SpannerChangeSourceOptions {
  dialect: Dialect;
  /** Change-stream name (validated as a plain identifier). */
  stream: string;
  /** Request priority (default low: replication should yield to the application). */
  priority?: Priority;
  /** Request tag, visible in Spanner's query statistics. */
  requestTag?: string;
}

/** Reads change-stream windows from Spanner. gRPC errors are thrown unchanged (see `classifyError`). */
export class SpannerChangeSource implements ChangeSource {
  private readonly stream: StreamName;

  constructor(
    private readonly database: Database,
    private readonly options: SpannerChangeSourceOptions,
  ) {
    this.stream = parseStreamName(options.stream);
  }

  async *read(query: ChangeQuery, signal?: AbortSignal): AsyncIterable<ChangeRecord> {
    if (signal?.aborted) return;
    const { sql, params, types } = changeStreamQuery({
      dialect: this.options.dialect,
      stream: this.stream,
      start: query.from,
      end: query.to,
      partitionToken: query.partitionToken,
      heartbeatMillis: query.heartbeatMs,
    });
    const requestOptions = {
      priority: apiPriority(this.options.priority ?? 'low'),
      ...(this.options.requestTag ? { requestTag: this.options.requestTag } : {}),
    };
    let decode: (values: WireValue[]) => ChangeRecord[] = () => {
      throw new DecodeError('ChangeRecord', 'a row arrived before the result named its columns');
    };
    const onFields = (fields: ResultField[]) => {
      const name = fields[0]?.name ?? '';
      if (this.options.dialect === 'POSTGRESQL') {
        decode = (values) => [decodePostgresRow({ [name]: values[0] ?? null })];
        return;
      }
      // GoogleSQL: ARRAY<STRUCT<…>> lists become the named objects the decoder reads.
      const structured = structurerOf(fields[0]?.type);
      decode = (values) => decodeGoogleSqlRow({ [name]: structured(values[0] ?? null) });
    };
    const rows = wireQueryRows(this.database, { sql, params, types }, { requestOptions, signal }, onFields);
    for await (const values of rows) {
      if (signal?.aborted) break;
      for (const record of decode(values)) {
        yield record;
        if (signal?.aborted) break;
      }
      if (signal?.aborted) break;
    }
  }
}
