/**
 * Reading rows from the Spanner client's result streams when the consumer is slower than Spanner (BigQuery
 * appends, ledger writes): the client's `PartialResultStream` (8.x) answers back-pressure by pushing an
 * `undefined` chunk every few milliseconds to probe whether it may resume (`_tryResume`). A probe the buffer
 * accepts reaches the consumer as a row; it carries nothing and is skipped here. After `maxResumeRetries`
 * refused probes (20 by default: about 13 s of back-pressure) the client destroys the stream, so the adapters
 * ask for {@link STREAM_RESUME_PROBES}.
 */

/**
 * Probes the client may make at one back-pressure pause before it gives up: its waits double from 4 ms to
 * 1,024 ms, then stay there, so 125 probes tolerate a consumer stalled for about two minutes. The same option
 * bounds the client's immediate retries of UNAVAILABLE before the first result (default 10).
 */
export const STREAM_RESUME_PROBES = 125;

/** The rows of a client result stream, without its back-pressure probes. */
export async function* resultRows(stream: AsyncIterable<unknown>): AsyncIterable<unknown> {
  for await (const row of stream) {
    if (row === undefined) continue;
    yield row;
  }
}
