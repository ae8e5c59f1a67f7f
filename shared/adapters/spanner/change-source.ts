/**
 * `ChangeSource` on Cloud Spanner: one window query on one partition through `database.runStream` in a
 * single-use strong read-only transaction (change-stream queries accept no other bound), rows decoded into
 * records in the order Spanner returns them.
 */
import type { Database } from '@google-cloud/spanner';
import type { ChangeRecord, Dialect } from '../../domain/change-record';
import { decodeGoogleSqlRow, decodePostgresRow } from '../../domain/change-record-decode';
import { changeStreamQuery, parseStreamName, type StreamName } from '../../domain/change-stream-query';
import type { ChangeQuery, ChangeSource } from '../../ports/change-source';
import { apiPriority, type Priority } from './request-options';
import { resultRows, STREAM_RESUME_PROBES } from './result-rows';

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
    // Default row options: the decoders read `Struct`s, `Int`s and `PreciseDate`s (and `PGJsonb` in PG) as is,
    // and no INT64 is squeezed through a JS number.
    const rows = this.database.runStream(
      { sql, params, types, requestOptions, maxResumeRetries: STREAM_RESUME_PROBES },
      { strong: true },
    );
    // Ending the client stream cancels the call; the iteration below then sees the stream end.
    const cancel = () => rows.end();
    signal?.addEventListener('abort', cancel, { once: true });
    const decode =
      this.options.dialect === 'POSTGRESQL' ? (r: unknown) => [decodePostgresRow(r)] : decodeGoogleSqlRow;
    try {
      for await (const row of resultRows(rows)) {
        if (signal?.aborted) break;
        for (const record of decode(row)) {
          yield record;
          if (signal?.aborted) break;
        }
        if (signal?.aborted) break;
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
      if (!rows.destroyed) rows.end();
    }
  }
}
