/**
 * Validation of a change-stream query, in the official emulator's order and with its codes and messages:
 * ExecuteSql vs ExecuteStreamingSql, argument binding and types, start/end timestamps, heartbeat range,
 * read_options, the transaction selector, and finally the partition token.
 */
import { z } from 'zod';
import { parseTimestamp } from '../../../../shared/domain/timestamp';
import { Code, SpannerError, type SpannerTypeJson, type WireValue } from '../hooks';
import type { Partition, PartitionSet } from './partitions';
import type { ArgValue, RawArg } from './query-parse';
import { messageTime } from './time';

const ARG_NAMES = [
  'start_timestamp',
  'end_timestamp',
  'partition_token',
  'heartbeat_milliseconds',
  'read_options',
];
const MULTI_USE =
  'Change stream queries are not supported for multi use transactions. Change stream queries must be strong reads executed via single use transactions using the ExecuteStreamingSql API.';
const NOT_STREAMING =
  'Change stream queries are not supported for the ExecuteSql API. Change stream queries must be strong reads executed via single use transactions using the ExecuteStreamingSql API.';

/** Bounds of `heartbeat_milliseconds` this emulator enforces (the official emulator's; the docs say 1000). */
export const HEARTBEAT_MIN_MS = 100;
export const HEARTBEAT_MAX_MS = 300_000;
/** How far in the future a start may be (the official emulator's limit). */
export const MAX_START_DELAY_NS = 10n * 60n * 1_000_000_000n;

/** Typed TVF arguments. */
export interface TvfArgs {
  startNs: bigint | null;
  endNs: bigint | null;
  token: string | null;
  heartbeatMs: bigint | null;
  readOptions: WireValue;
}

const invalid = (message: string) => new SpannerError(Code.INVALID_ARGUMENT, message);
const outOfRange = (message: string) => new SpannerError(Code.OUT_OF_RANGE, message);

function resolve(arg: ArgValue, params: Record<string, WireValue>, types: Record<string, SpannerTypeJson>) {
  if (arg.kind === 'null') return { value: null as WireValue, code: undefined };
  if (arg.kind !== 'param')
    return { value: arg.text as WireValue, code: arg.kind === 'int' ? 'INT64' : undefined };
  if (!(arg.name in params)) throw invalid(`No parameter found for binding: ${arg.name}`);
  return { value: params[arg.name] ?? null, code: types[arg.name]?.code };
}

function typed(
  name: string,
  value: WireValue,
  code: string | undefined,
  tvf: string,
): bigint | string | null {
  if (value === null) return null;
  const mismatch = () => invalid(`No matching signature for ${tvf}: argument ${name} has the wrong type.`);
  const expect =
    name === 'heartbeat_milliseconds' ? 'INT64' : name === 'partition_token' ? 'STRING' : 'TIMESTAMP';
  if (code && code !== 'TYPE_CODE_UNSPECIFIED' && code !== expect && name !== 'read_options')
    throw mismatch();
  try {
    if (expect === 'INT64') return BigInt(typeof value === 'number' ? Math.trunc(value) : String(value));
    if (expect === 'TIMESTAMP') return BigInt(parseTimestamp(String(value)));
    if (typeof value === 'string') return value;
  } catch {
    throw mismatch();
  }
  throw mismatch();
}

/** Binds positional and named arguments to the TVF signature and types them. */
export function bindArguments(
  raw: RawArg[],
  params: Record<string, WireValue>,
  types: Record<string, SpannerTypeJson>,
  tvf: string,
): TvfArgs {
  if (raw.length > ARG_NAMES.length) throw invalid(`No matching signature for ${tvf}: too many arguments.`);
  const bound = new Map<string, { value: WireValue; code: string | undefined }>();
  let sawNamed = false;
  raw.forEach((arg, i) => {
    const name = arg.name ?? ARG_NAMES[i];
    if (!name || !ARG_NAMES.includes(name))
      throw invalid(`Named argument ${arg.name} not found in signature for ${tvf}.`);
    if (!arg.name && sawNamed) throw invalid('Positional argument is invalid after named arguments.');
    sawNamed ||= arg.name !== undefined;
    if (bound.has(name)) throw invalid(`Duplicate named argument ${name} found in call to ${tvf}.`);
    bound.set(name, resolve(arg.value, params, types));
  });
  const get = (name: string) => {
    const b = bound.get(name);
    return b ? typed(name, b.value, b.code, tvf) : null;
  };
  return {
    startNs: get('start_timestamp') as bigint | null,
    endNs: get('end_timestamp') as bigint | null,
    token: get('partition_token') as string | null,
    heartbeatMs: get('heartbeat_milliseconds') as bigint | null,
    readOptions: bound.get('read_options')?.value ?? null,
  };
}

/** What the validator needs to know about the stream. */
export interface StreamLimits {
  nowNs: bigint;
  createdAtNs: bigint;
  retentionNs: bigint;
}

/** Checks start/end, heartbeat and read_options (the analysis-time checks). */
export function validateArguments(args: TvfArgs, limits: StreamLimits, partitions: PartitionSet): void {
  if (args.startNs === null) throw invalid('start_timestamp must not be null.');
  const token = args.token === null ? undefined : partitions.get(args.token);
  if (token?.endNs != null && token.endNs < limits.nowNs - limits.retentionNs) {
    throw outOfRange(
      'This partition is no longer valid. All Change Stream records associated with this partition have expired and have been deleted, as specified by the Change Stream retention period.',
    );
  }
  const retained = limits.nowNs - limits.retentionNs;
  let min = retained;
  if (limits.createdAtNs > min) min = limits.createdAtNs;
  const max = limits.nowNs + MAX_START_DELAY_NS;
  const start = args.startNs;
  if (start < min) {
    throw outOfRange(
      `Specified start_timestamp is too far in the past. Please specify a start_timestamp within the earliest read timestamp: ${messageTime(min)}. Received start_timestamp: ${messageTime(start)}.`,
    );
  }
  if (start > max) {
    throw outOfRange(
      `Specified start_timestamp is too far in the future. Please specify a start_timestamp within the earliest read timestamp: ${messageTime(min)}, and the current maximum start timestamp: ${messageTime(max)}. Received start_timestamp: ${messageTime(start)}.`,
    );
  }
  if (args.endNs !== null && start > args.endNs) {
    throw invalid(
      `If end_timestamp is specified, start_timestamp must be <= end_timestamp. Received start_timestamp: ${messageTime(start)}, end_timestamp: ${messageTime(args.endNs)}.`,
    );
  }
  if (args.heartbeatMs === null) throw invalid('heartbeat_milliseconds must not be null.');
  if (args.heartbeatMs < HEARTBEAT_MIN_MS || args.heartbeatMs > HEARTBEAT_MAX_MS) {
    throw outOfRange(
      `heartbeat_milliseconds must be within min ${HEARTBEAT_MIN_MS} and max ${HEARTBEAT_MAX_MS}. Received heartbeat_milliseconds: ${args.heartbeatMs}.`,
    );
  }
  if (args.readOptions !== null) throw new SpannerError(Code.UNIMPLEMENTED, 'read_options must be null.');
}

const Selector = z.looseObject({
  selector: z.string().optional(),
  singleUse: z
    .looseObject({ readOnly: z.looseObject({ strong: z.boolean().nullish() }).nullish() })
    .nullish(),
  id: z.unknown().optional(),
  begin: z.unknown().optional(),
});

const present = (v: unknown) =>
  v !== undefined &&
  v !== null &&
  !(v instanceof Uint8Array && v.length === 0) &&
  !(typeof v === 'string' && v === '');

/** Only ExecuteStreamingSql in a single-use strong read-only transaction (or no selector) may read. */
export function validateTransport(transaction: unknown, streaming: boolean): void {
  if (!streaming) throw invalid(NOT_STREAMING);
  if (transaction === undefined || transaction === null) return;
  const parsed = Selector.safeParse(transaction);
  if (!parsed.success) throw invalid(MULTI_USE);
  const sel = parsed.data;
  const kind =
    sel.selector ??
    (present(sel.singleUse) ? 'singleUse' : present(sel.id) ? 'id' : present(sel.begin) ? 'begin' : '');
  if (kind === '') return;
  if (kind !== 'singleUse') throw invalid(MULTI_USE);
  if (sel.singleUse?.readOnly?.strong !== true) throw invalid(MULTI_USE);
}

/** Resolves the token to its partition and checks the start lies within the partition's lifetime. */
export function resolvePartition(args: TvfArgs, partitions: PartitionSet): Partition | null {
  if (args.token === null) return null;
  const p = partitions.get(args.token);
  if (!p) {
    throw invalid(
      `Specified partition_token is invalid, as it does not belong to the Change Stream associated with the TVF. Received partition_token: ${args.token}.`,
    );
  }
  const start = args.startNs ?? 0n;
  if (start < p.startNs || (p.endNs !== null && start > p.endNs)) {
    throw outOfRange(
      `Specified start_timestamp is invalid for the partition. Please specify a start_timestamp within ${messageTime(p.startNs)} and ${messageTime(p.endNs)}. Received start_timestamp: ${messageTime(start)}.`,
    );
  }
  return p;
}
