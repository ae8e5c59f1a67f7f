/**
 * What the Lineage emulator keeps: processes (one per OpenLineage job), runs (one per run id), lineage
 * events (one per run event that links inputs to outputs) and the links they create, plus every raw event
 * received. `ProcessOpenLineageRunEvent` validates the fields the service needs and answers
 * INVALID_ARGUMENT naming the bad one; a repeated `request_id` returns the first answer and records nothing.
 */
import { createHash } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import {
  fromStruct,
  type Json,
  type Struct,
  type StructValue,
  toValue,
} from '../../../shared/domain/lineage/struct';

/** An error answered with a gRPC status. */
export class LineageError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** `{seconds, nanos}` as the protos carry timestamps (seconds as a string: longs are strings). */
export interface ProtoTimestamp {
  seconds: string;
  nanos: number;
}

/** An entity in a link: a fully qualified name and, for column-level links, the column. */
export interface EntityRef {
  fullyQualifiedName: string;
  field?: string[];
}

/** One link of a lineage event. */
export interface StoredLink {
  source: EntityRef;
  target: EntityRef;
}

export interface StoredProcess {
  name: string;
  displayName: string;
  attributes: Record<string, StructValue>;
  origin: { sourceType: 'CUSTOM'; name: string };
}

export interface StoredRun {
  name: string;
  displayName: string;
  startTime: ProtoTimestamp;
  endTime?: ProtoTimestamp;
  state: 'STARTED' | 'COMPLETED' | 'FAILED' | 'ABORTED';
}

export interface StoredEvent {
  name: string;
  run: string;
  startTime: ProtoTimestamp;
  links: StoredLink[];
}

/** A raw event as received, with where it was recorded. */
export interface ReceivedEvent {
  parent: string;
  requestId: string | undefined;
  openLineage: { [key: string]: Json };
}

const EVENT_TYPES = new Set(['START', 'RUNNING', 'COMPLETE', 'ABORT', 'FAIL', 'OTHER']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PARENT = /^projects\/[^/]+\/locations\/[^/]+$/;
const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/;

function invalid(message: string): LineageError {
  return new LineageError(status.INVALID_ARGUMENT, message);
}

function str(value: Json | undefined): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function obj(value: Json | undefined): { [key: string]: Json } {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

function list(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : [];
}

/** RFC 3339 to a proto timestamp, nanoseconds kept. @throws LineageError when unreadable. */
export function parseEventTime(text: string | undefined): ProtoTimestamp {
  const m = text === undefined ? null : RFC3339.exec(text);
  const ms = m ? Date.parse(`${m[1]}${m[3]}`) : Number.NaN;
  if (!m || Number.isNaN(ms)) throw invalid('open_lineage.eventTime: must be an RFC 3339 timestamp');
  return { seconds: String(Math.floor(ms / 1000)), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

/** The fully qualified name the emulator gives a dataset: `<namespace>:<name>`. */
export function fullyQualifiedName(dataset: { [key: string]: Json }): string {
  return `${str(dataset.namespace) ?? ''}:${str(dataset.name) ?? ''}`;
}

function id(text: string): string {
  return createHash('sha1').update(text).digest('hex').slice(0, 32);
}

/** Table-level links (every input to every output) and column-level links from `columnLineage` facets. */
export function linksOf(event: { [key: string]: Json }): StoredLink[] {
  const inputs = list(event.inputs).map(obj);
  const outputs = list(event.outputs).map(obj);
  const links: StoredLink[] = [];
  for (const out of outputs) {
    const target = fullyQualifiedName(out);
    for (const input of inputs)
      links.push({
        source: { fullyQualifiedName: fullyQualifiedName(input) },
        target: { fullyQualifiedName: target },
      });
    const fields = obj(obj(obj(out.facets).columnLineage).fields);
    for (const [column, spec] of Object.entries(fields)) {
      for (const f of list(obj(spec).inputFields).map(obj)) {
        links.push({
          source: { fullyQualifiedName: fullyQualifiedName(f), field: [str(f.field) ?? ''] },
          target: { fullyQualifiedName: target, field: [column] },
        });
      }
    }
  }
  return links;
}

/** A `ProcessOpenLineageRunEvent` call the emulator accepted, as `--data-dir` journals it. */
export interface AcceptedCall {
  parent: string;
  struct: Struct;
  requestId: string | undefined;
}

/** Processes, runs, events and links, in insertion order. */
export class LineageState {
  /** Called with each newly accepted call before it is answered (persistence). */
  onAccepted: ((call: AcceptedCall) => void) | undefined;
  readonly processes = new Map<string, StoredProcess>();
  readonly runs = new Map<string, StoredRun>();
  readonly events: StoredEvent[] = [];
  readonly received: ReceivedEvent[] = [];
  private readonly answers = new Map<string, unknown>();

  /** `ProcessOpenLineageRunEvent`. @throws LineageError INVALID_ARGUMENT naming the bad field. */
  process(parent: string, struct: Struct | undefined, requestId: string | undefined) {
    if (!PARENT.test(parent)) throw invalid('parent: must be projects/<project>/locations/<location>');
    if (!struct) throw invalid('open_lineage: is required');
    const key = requestId ? `${parent} ${requestId}` : undefined;
    if (key && this.answers.has(key)) return this.answers.get(key);
    const event = fromStruct(struct);
    const job = obj(event.job);
    const run = obj(event.run);
    const eventType = str(event.eventType) ?? 'OTHER';
    if (!EVENT_TYPES.has(eventType)) throw invalid(`open_lineage.eventType: unknown ${eventType}`);
    const at = parseEventTime(str(event.eventTime));
    const namespace = str(job.namespace);
    const jobName = str(job.name);
    if (!namespace || !jobName) throw invalid('open_lineage.job: namespace and name are required');
    const runId = str(run.runId);
    if (!runId || !UUID.test(runId)) throw invalid('open_lineage.run.runId: must be a UUID');
    if (!str(event.producer)) throw invalid('open_lineage.producer: is required');
    this.onAccepted?.({ parent, struct, requestId });
    const process = this.upsertProcess(parent, namespace, jobName);
    const storedRun = this.upsertRun(process.name, runId, eventType, at);
    const links = linksOf(event);
    const names: string[] = [];
    if (links.length > 0) {
      const name = `${storedRun.name}/lineageEvents/${id(`${this.events.length}/${runId}`)}`;
      this.events.push({ name, run: storedRun.name, startTime: at, links });
      names.push(name);
    }
    this.received.push({ parent, requestId, openLineage: event });
    const answer = { process: process.name, run: storedRun.name, lineageEvents: names };
    if (key) this.answers.set(key, answer);
    return answer;
  }

  private upsertProcess(parent: string, namespace: string, jobName: string): StoredProcess {
    const name = `${parent}/processes/${id(`${namespace}/${jobName}`)}`;
    const existing = this.processes.get(name);
    if (existing) return existing;
    const created: StoredProcess = {
      name,
      displayName: `${namespace}.${jobName}`,
      attributes: { namespace: toValue(namespace), name: toValue(jobName) },
      origin: { sourceType: 'CUSTOM', name: namespace },
    };
    this.processes.set(name, created);
    return created;
  }

  private upsertRun(process: string, runId: string, eventType: string, at: ProtoTimestamp): StoredRun {
    const name = `${process}/runs/${id(runId)}`;
    const run = this.runs.get(name) ?? { name, displayName: runId, startTime: at, state: 'STARTED' as const };
    const ended = { COMPLETE: 'COMPLETED', FAIL: 'FAILED', ABORT: 'ABORTED' } as const;
    const end = ended[eventType as keyof typeof ended];
    if (end) {
      run.state = end;
      run.endTime = at;
    }
    this.runs.set(name, run);
    return run;
  }
}
