/**
 * The writer use case: one `POST /mutations` request (or Pub/Sub push) from body to answer. Parse and type
 * every mutation first — any problem is a 400 and nothing is written; an unknown table or column re-reads
 * the schema once before it counts as a problem — then send them through the retry loop, write the routed
 * ones to one dead-letter object, log the request's metrics and answer.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../domain/log';
import { keyValue, plain } from '../../domain/log-values';
import { fromEpochMillis } from '../../domain/timestamp';
import { limitWarnings } from '../../domain/writer/batching';
import type { WriterConfig } from '../../domain/writer/config';
import { type DeadLetterEntry, deadLetterDocument, deadLetterName } from '../../domain/writer/dead-letter';
import { keyJson, type TypedMutation, typeMutations } from '../../domain/writer/mutations';
import {
  type Answer,
  answerFor,
  badRequest,
  type RequestMetrics,
  type ResultEntry,
  tally,
} from '../../domain/writer/outcome';
import { isSchemaMiss, worstCase } from '../../domain/writer/policy';
import { type MutationInput, parseWriteRequest, type WriteRequest } from '../../domain/writer/request';
import type { MutationSink } from '../../ports/mutation-sink';
import type { ObjectStore } from '../../ports/object-store';
import type { WriterCatalogSource } from '../../ports/writer-catalog';
import { withRetries } from '../common';
import { CatalogCache } from './catalog-cache';
import { sendAll } from './send';

/** What the writer runs on. */
export interface WriterDeps {
  config: WriterConfig;
  sink: MutationSink;
  catalog: WriterCatalogSource;
  /** The dead-letter bucket. */
  deadLetters: ObjectStore;
  log: Logger;
  nowMs?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  newId?: () => string;
}

const realSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The writer of one function instance. */
export class MutationWriter {
  private readonly catalog: CatalogCache;
  private readonly nowMs: () => number;

  constructor(private readonly deps: WriterDeps) {
    this.catalog = new CatalogCache(deps.catalog);
    this.nowMs = deps.nowMs ?? Date.now;
  }

  /** Reads the schema and logs the settings (a limit that another makes unreachable is a warning). */
  async start(): Promise<void> {
    const { config, log } = this.deps;
    for (const warning of limitWarnings(config.limits))
      log.warn(`writer settings: ${warning}`, { event: 'writer.settings' });
    const worst = worstCase(config.retry);
    log.info('writer started', {
      event: 'writer.start',
      limits: config.limits,
      retry: config.retry,
      worstCaseRetryMs: worst.totalMs,
      constraintViolationPolicy: config.constraintViolationPolicy,
      ordering: config.ordering,
      tables: (await this.catalog.get()).tables.length,
    });
  }

  /** Handles one request body (parsed JSON, or raw text / bytes). */
  async handle(body: unknown): Promise<Answer> {
    const receivedMs = this.nowMs();
    const parsed = parseWriteRequest(body, this.deps.config.maxRequestMutations);
    if (!parsed.ok) return this.rejected(parsed.problems);
    const typed = await this.typed(parsed.value.mutations);
    if (!typed.ok) return this.rejected(typed.problems);
    return this.write(parsed.value, typed.value, receivedMs);
  }

  private async typed(mutations: MutationInput[]) {
    const first = typeMutations(await this.catalog.get(), mutations);
    if (first.ok || !first.schemaMiss) return first;
    // A table or column the cached schema lacks may have been created since: read it again, once.
    return typeMutations(await this.catalog.refresh(), mutations);
  }

  /** Logs the problems with their values marked (the log redacts them); the producer gets them plain. */
  private rejected(problems: string[]): Answer {
    this.deps.log.warn('writer request rejected', {
      event: 'writer.rejected',
      status: 400,
      problems: problems.slice(0, 20),
    });
    return badRequest(problems.map(plain));
  }

  private async write(
    request: WriteRequest,
    mutations: TypedMutation[],
    receivedMs: number,
  ): Promise<Answer> {
    const { config } = this.deps;
    const { entries, metrics } = await sendAll(mutations, {
      sink: this.deps.sink,
      limits: config.limits,
      retry: config.retry,
      concurrency: config.concurrency,
      ordering: config.ordering,
      policy: config.constraintViolationPolicy,
      nowMs: this.nowMs,
      deadlineMs: receivedMs + config.requestDeadlineMs,
      sleep: this.deps.sleep ?? realSleep,
      random: this.deps.random ?? Math.random,
      tag: `sluice-writer-${config.pipeline}`,
    });
    if (
      entries.some(
        (e) => e.result.kind !== 'applied' && e.result.kind !== 'unapplied' && isSchemaMiss(e.result.status),
      )
    )
      this.catalog.invalidate();
    const deadLetter = await this.route(request, mutations, entries, receivedMs);
    const all: RequestMetrics = {
      mutations: mutations.length,
      ...tally(entries),
      ...metrics,
      groupsRouted: entries.filter((e) => e.result.kind === 'routed').length,
    };
    this.logRequest(all, request, deadLetter, entries);
    return answerFor(entries, all, deadLetter);
  }

  /** Writes the routed mutations to one dead-letter object; if that fails they count as unapplied. */
  private async route(
    request: WriteRequest,
    mutations: TypedMutation[],
    entries: ResultEntry[],
    receivedMs: number,
  ): Promise<string | undefined> {
    const routed = entries.filter((e) => e.result.kind === 'routed');
    if (routed.length === 0) return undefined;
    const { bucket, prefix } = this.deps.config.deadLetters;
    const origin = {
      requestId: this.deps.newId?.() ?? randomUUID(),
      receivedAt: fromEpochMillis(receivedMs),
      ...(request.pubsub ? { pubsub: request.pubsub } : {}),
    };
    const typed = new Map(mutations.map((m) => [m.index, m]));
    const letters: DeadLetterEntry[] = routed.flatMap((e) => {
      if (e.result.kind !== 'routed') return [];
      const m = typed.get(e.index);
      return [
        {
          mutation: request.mutations[e.index] as MutationInput,
          status: e.result.status,
          reason: e.result.reason,
          attempts: e.attempts,
          ...(m ? { key: keyJson(m) } : {}),
        },
      ];
    });
    const name = deadLetterName(prefix, origin);
    try {
      const outcome = await withRetries(`dead letter ${name}`, () =>
        this.deps.deadLetters.write(name, deadLetterDocument(origin, letters), {
          ifGeneration: 0,
          contentType: 'application/json',
        }),
      );
      // The name carries a fresh UUID: an existing object is our own earlier attempt, whose answer the
      // client lost and retried (checking it would need read access, which the writer is not given).
      if (!outcome.ok)
        this.deps.log.notice('writer dead letter already written', {
          event: 'writer.dead-letter',
          object: name,
        });
      return `gs://${bucket}/${name}`;
    } catch (err) {
      this.deps.log.error('writer dead letter not written: the routed mutations count as unapplied', err, {
        event: 'writer.dead-letter-failed',
        object: name,
      });
      for (const [i, e] of routed.entries())
        e.result = {
          kind: 'unapplied',
          reason: 'dead-letter-write-failed',
          status: (letters[i] as DeadLetterEntry).status,
        };
      return undefined;
    }
  }

  private logRequest(
    m: RequestMetrics,
    request: WriteRequest,
    deadLetter: string | undefined,
    entries: ResultEntry[],
  ): void {
    const fields = {
      event: 'writer.request',
      ...m,
      ...(deadLetter ? { deadLetter } : {}),
      ...(request.pubsub ? { pubsubMessageId: request.pubsub.messageId } : {}),
      ...(m.failed + m.unapplied > 0
        ? {
            firstFailures: entries
              .filter((e) => e.result.kind === 'failed' || e.result.kind === 'unapplied')
              .slice(0, 5)
              .map((e) => ({ index: e.index, table: e.table, result: loggedResult(e.result) })),
          }
        : {}),
    };
    if (m.failed > 0) this.deps.log.error('writer request failed', undefined, fields);
    else if (m.unapplied > 0 || m.routed > 0)
      this.deps.log.warn('writer request done with routed or unapplied mutations', fields);
    else this.deps.log.info('writer request done', fields);
  }
}

/**
 * A failed mutation's result for the log: Spanner's message may quote the row's key (ALREADY_EXISTS names
 * it), so it is marked as a key's (ADR-2307); its code stays readable.
 */
function loggedResult(result: ResultEntry['result']): unknown {
  const status = 'status' in result ? result.status : undefined;
  if (!status || typeof status.message !== 'string') return result;
  return { ...result, status: { ...status, message: keyValue(status.message) } };
}
