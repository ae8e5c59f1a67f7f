/**
 * {@link LineageSink} over Google's Data Lineage API: `ProcessOpenLineageRunEvent` with the event as a
 * protobuf Struct, under `projects/<project>/locations/<location>`. The API creates the process (job), run
 * and lineage event (links) from the OpenLineage payload; a `request_id` derived from the event makes a
 * repeated send of the same event one event, not two.
 */
import { createHash } from 'node:crypto';
import type { LineageClient } from '@google-cloud/lineage';
import { SluiceError } from '../../domain/errors';
import type { RunEvent } from '../../domain/lineage/open-lineage';
import { type Json, toStruct } from '../../domain/lineage/struct';
import type { LineageReceipt, LineageSink } from '../../ports/lineage-sink';

/** A UUID4-shaped id of the event's content: the API's `request_id` must be a UUID. */
function requestId(event: RunEvent): string {
  const hex = createHash('sha256').update(JSON.stringify(event)).digest('hex');
  const variant = ((Number.parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** How long one send may take, retries of UNAVAILABLE by the client included (default 10 s). */
export interface LineageCallLimits {
  totalTimeoutMs?: number;
}

const UNAVAILABLE = 14;

/** The client's retry policy for UNAVAILABLE, with the total time bounded. */
function retryOptions(totalTimeoutMillis: number) {
  return {
    retryCodes: [UNAVAILABLE],
    backoffSettings: {
      initialRetryDelayMillis: 100,
      retryDelayMultiplier: 1.3,
      maxRetryDelayMillis: 2_000,
      initialRpcTimeoutMillis: totalTimeoutMillis,
      rpcTimeoutMultiplier: 1,
      maxRpcTimeoutMillis: totalTimeoutMillis,
      totalTimeoutMillis,
    },
  };
}

/**
 * Sends run events to the Data Lineage API through the official client. The client's own policy retries
 * UNAVAILABLE for up to 10 minutes; a scheduler tick must not wait that long for lineage, so a send is
 * bounded here and the lineage reporter sends it again at a later tick.
 */
export class DataLineageSink implements LineageSink {
  private readonly parent: string;
  private readonly options: { retry: ReturnType<typeof retryOptions> };

  constructor(
    private readonly client: LineageClient,
    project: string,
    location: string,
    limits: LineageCallLimits = {},
  ) {
    this.parent = `projects/${project}/locations/${location}`;
    // Not `maxRetries`: the client then refuses later calls that use its default policy.
    this.options = { retry: retryOptions(limits.totalTimeoutMs ?? 10_000) };
  }

  async send(event: RunEvent): Promise<LineageReceipt> {
    try {
      const [response] = await this.client.processOpenLineageRunEvent(
        {
          parent: this.parent,
          openLineage: toStruct(event as unknown as { [key: string]: Json }),
          requestId: requestId(event),
        },
        this.options,
      );
      return {
        process: response.process ?? '',
        run: response.run ?? '',
        lineageEvents: response.lineageEvents ?? [],
      };
    } catch (err) {
      throw SluiceError.from(err, `lineage ${event.eventType} of ${event.job.name}`);
    }
  }
}
