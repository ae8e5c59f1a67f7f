/**
 * The writer's request body: `{"mutations": [...]}`, each mutation naming its table — `{"op": "insert" |
 * "update" | "insertOrUpdate" | "replace", "table": "T", "row": {...}}` or `{"op": "delete", "table": "T",
 * "key": [...]}` — either as the body itself or inside a Pub/Sub push envelope (`{"message": {"data":
 * <base64 of the same JSON>, "messageId": …}, "subscription": …}`). Every problem is named with its path.
 */
import { z } from 'zod';
import { describeIssues } from '../zod-helpers';

/** The operations of a mutation. */
export const MUTATION_OPS = ['insert', 'update', 'insertOrUpdate', 'replace', 'delete'] as const;
/** One of {@link MUTATION_OPS}. */
export type MutationOp = (typeof MUTATION_OPS)[number];

/** One mutation as the producer sent it (values not yet typed). */
export type MutationInput =
  | { index: number; op: Exclude<MutationOp, 'delete'>; table: string; row: Record<string, unknown> }
  | { index: number; op: 'delete'; table: string; key: unknown[] };

/** Where a Pub/Sub push request came from. */
export interface PubSubOrigin {
  messageId: string;
  subscription?: string;
  publishTime?: string;
  deliveryAttempt?: number;
}

/** A parsed request. */
export interface WriteRequest {
  mutations: MutationInput[];
  /** Present when the body was a Pub/Sub push envelope. */
  pubsub?: PubSubOrigin;
}

/** The outcome of parsing. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: string[] };

const table = z
  .string({ error: 'must be a table name (a string)' })
  .min(1, 'must be a table name (a string)');

const writeSchema = z.strictObject({
  op: z.enum(['insert', 'update', 'insertOrUpdate', 'replace']),
  table,
  row: z.record(z.string(), z.unknown(), { error: 'must be an object of column name to value' }),
});

const deleteSchema = z.strictObject({
  op: z.literal('delete'),
  table,
  key: z
    .array(z.unknown(), { error: 'must be the list of primary-key values, in key order' })
    .min(1, 'must be the list of primary-key values, in key order'),
});

const bodySchema = z.strictObject({
  mutations: z.array(z.unknown(), { error: 'must be a list of mutations' }).min(1, 'must not be empty'),
});

const envelopeSchema = z.object({
  message: z.object({
    data: z.string({ error: 'must be the base64 of the JSON body {"mutations": [...]}' }),
    messageId: z.string().optional(),
    message_id: z.string().optional(),
    publishTime: z.string().optional(),
  }),
  subscription: z.string().optional(),
  deliveryAttempt: z.number().int().optional(),
});

/** Puts problems (`path: message`, `(root)` for the whole value) under `prefix` (empty: the body). */
function under(prefix: string, problems: string[]): string[] {
  return problems.map((p) => {
    if (p.startsWith('(root)')) return `${prefix || 'body'}${p.slice(6)}`;
    return prefix ? `${prefix}.${p}` : p;
  });
}

/** A mutation with an unknown `op`: that problem and every other one, as if the op were right. */
function badOp(raw: object, path: string): string[] {
  const { op, ...fields } = raw as Record<string, unknown>;
  const rest =
    'key' in fields
      ? deleteSchema.omit({ op: true }).safeParse(fields)
      : writeSchema.omit({ op: true }).safeParse(fields);
  const others = rest.success ? [] : under(path, describeIssues(rest.error));
  return [`${path}.op: must be one of ${MUTATION_OPS.join(', ')}, saw ${JSON.stringify(op)}`, ...others];
}

/**
 * Spanner keeps a JSON value to 80 levels of nesting (Spanner quotas and limits, "JSON": maximum nesting
 * depth); a request adds four of its own (body, list, mutation, row). Deeper bodies are refused before any
 * recursive step (typing, number checks, serialising) could run out of stack.
 */
export const MAX_BODY_DEPTH = 84;

/** The nesting depth of a parsed JSON value, counted without recursion; stops past `max`. */
export function jsonDepth(value: unknown, max = MAX_BODY_DEPTH): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > max) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function tooDeep(value: unknown, what: string): Parsed<never> | undefined {
  if (jsonDepth(value) <= MAX_BODY_DEPTH) return undefined;
  return {
    ok: false,
    problems: [
      `${what}: nested deeper than ${MAX_BODY_DEPTH} levels (Spanner keeps a JSON value to 80 levels)`,
    ],
  };
}

const WRITE_OPS: ReadonlySet<unknown> = new Set(['insert', 'update', 'insertOrUpdate', 'replace']);

/**
 * A mutation of exactly the shape the schemas accept, checked without them: three members, a non-empty table
 * name, and a row that is a plain object or a non-empty key list. Every request's every mutation comes this
 * way; anything else goes to the schemas, which name each problem.
 */
function plainMutation(m: Record<string, unknown>, index: number): MutationInput | undefined {
  const { op, table, row, key } = m;
  if (typeof table !== 'string' || table === '' || Object.keys(m).length !== 3) return undefined;
  if (op === 'delete') return Array.isArray(key) && key.length > 0 ? { index, op, table, key } : undefined;
  if (!WRITE_OPS.has(op) || typeof row !== 'object' || row === null || Array.isArray(row)) return undefined;
  if (Object.getPrototypeOf(row) !== Object.prototype) return undefined;
  return { index, op: op as Exclude<MutationOp, 'delete'>, table, row: row as Record<string, unknown> };
}

function parseMutation(raw: unknown, index: number): Parsed<MutationInput> {
  const path = `mutations[${index}]`;
  const plain =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw)
      ? plainMutation(raw as Record<string, unknown>, index)
      : undefined;
  if (plain) return { ok: true, value: plain };
  const op = (raw as { op?: unknown } | null)?.op;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, problems: [`${path}: must be an object {"op", "table", "row" | "key"}`] };
  if (!MUTATION_OPS.includes(op as MutationOp)) return { ok: false, problems: badOp(raw, path) };
  const parsed = (op === 'delete' ? deleteSchema : writeSchema).safeParse(raw);
  if (!parsed.success) return { ok: false, problems: under(path, describeIssues(parsed.error)) };
  return { ok: true, value: { index, ...parsed.data } as MutationInput };
}

/** Parses `{"mutations": [...]}`, naming every problem. */
export function parseMutationsBody(
  body: unknown,
  maxMutations: number,
  prefix = '',
): Parsed<MutationInput[]> {
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) return { ok: false, problems: under(prefix, describeIssues(parsed.error)) };
  const count = parsed.data.mutations.length;
  if (count > maxMutations)
    return {
      ok: false,
      problems: under(prefix, [`mutations: at most ${maxMutations} per request, got ${count}`]),
    };
  const problems: string[] = [];
  const mutations: MutationInput[] = [];
  parsed.data.mutations.forEach((raw, i) => {
    const m = parseMutation(raw, i);
    if (m.ok) mutations.push(m.value);
    else problems.push(...under(prefix, m.problems));
  });
  return problems.length ? { ok: false, problems } : { ok: true, value: mutations };
}

function decodeJson(raw: unknown, what: string): Parsed<unknown> {
  if (typeof raw !== 'string' && !Buffer.isBuffer(raw)) return { ok: true, value: raw };
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : raw;
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (err) {
    return { ok: false, problems: [`${what}: not JSON (${(err as Error).message})`] };
  }
}

function parseEnvelope(body: unknown, maxMutations: number): Parsed<WriteRequest> {
  const env = envelopeSchema.safeParse(body);
  if (!env.success) return { ok: false, problems: under('', describeIssues(env.error)) };
  const { message } = env.data;
  const data = Buffer.from(message.data, 'base64');
  if (data.toString('base64').replace(/=+$/, '') !== message.data.replace(/=+$/, ''))
    return { ok: false, problems: ['message.data: must be base64'] };
  const inner = decodeJson(data, 'message.data');
  if (!inner.ok) return inner;
  const deep = tooDeep(inner.value, 'message.data');
  if (deep) return deep;
  const mutations = parseMutationsBody(inner.value, maxMutations, 'message.data');
  if (!mutations.ok) return mutations;
  const pubsub: PubSubOrigin = { messageId: message.messageId ?? message.message_id ?? '' };
  if (env.data.subscription) pubsub.subscription = env.data.subscription;
  if (message.publishTime) pubsub.publishTime = message.publishTime;
  if (env.data.deliveryAttempt !== undefined) pubsub.deliveryAttempt = env.data.deliveryAttempt;
  return { ok: true, value: { mutations: mutations.value, pubsub } };
}

/**
 * Parses a request body: already-parsed JSON, or its raw text / bytes. A body with a `message` and no
 * `mutations` is a Pub/Sub push envelope.
 */
export function parseWriteRequest(raw: unknown, maxMutations: number): Parsed<WriteRequest> {
  const body = decodeJson(raw, 'body');
  if (!body.ok) return body;
  const value = body.value;
  const deep = tooDeep(value, 'body');
  if (deep) return deep;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return {
      ok: false,
      problems: ['body: must be a JSON object {"mutations": [...]} or a Pub/Sub push envelope'],
    };
  if ('message' in value && !('mutations' in value)) return parseEnvelope(value, maxMutations);
  const mutations = parseMutationsBody(value, maxMutations);
  return mutations.ok ? { ok: true, value: { mutations: mutations.value } } : mutations;
}
