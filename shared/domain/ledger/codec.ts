/**
 * Ledger objects as JSON: timestamps as RFC 3339 strings with nine fractional digits, parsed back with zod.
 * A corrupt object is an error naming every problem — never silently defaulted, because a defaulted position
 * or state would re-read or skip data.
 */
import { z } from 'zod';
import { ERROR_KINDS, SluiceError } from '../errors';
import { formatTimestamp } from '../timestamp';
import { describeIssues, timestampString } from '../zod-helpers';
import { ENTRY_FORMAT, type PartitionEntry, partitionId } from './entry';
import { sortedCursors } from './history-cursor';

const partitionIdSchema = z.string().regex(/^[0-9a-f]{32}$/, 'must be 32 lowercase hex digits');
const count = z.number().int().min(0);

const leaseSchema = z.strictObject({ holder: z.string().min(1), expiresAt: timestampString });

const cursorSchema = z.strictObject({
  stream: z
    .string()
    .regex(
      /^projects\/[^/]+\/datasets\/[^/]+\/tables\/[^/]+\/streams\/[^/]+$/,
      'must be a write stream name',
    ),
  offset: z.number().int().min(-Number.MAX_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER),
  createdAt: timestampString,
  schema: z.string().min(1),
  // Absent in cursors written before the feeding source tables were recorded (ADR-1605).
  sources: z.string().optional(),
});

const entrySchema = z.strictObject({
  format: z.literal(ENTRY_FORMAT),
  id: partitionIdSchema,
  token: z.string().min(1),
  state: z.enum(['waiting', 'ready', 'leased', 'finished', 'failed']),
  epoch: count,
  start: timestampString,
  position: timestampString,
  end: timestampString.nullable(),
  lease: leaseSchema.nullable(),
  parentTokens: z.array(z.string().min(1)),
  parentIds: z.array(partitionIdSchema),
  childTokens: z.array(z.string().min(1)).nullable(),
  childIds: z.array(partitionIdSchema).nullable(),
  // Absent in entries written before failures were counted: nothing known to be failing.
  failures: count.default(0),
  lastError: z
    .strictObject({
      kind: z.enum(ERROR_KINDS),
      message: z.string(),
      at: timestampString,
      record: z
        .strictObject({
          table: z.string().min(1),
          column: z.string().min(1).optional(),
          key: z.string(),
          commitTimestamp: timestampString,
        })
        .optional(),
    })
    .nullable(),
  counters: z.strictObject({ leases: count, windows: count, records: count, errors: count }),
  // Absent in entries written before history cursors existed: no stream yet, which is what they mean.
  history: z.record(z.string().min(1), cursorSchema).default({}),
  writer: z.string().min(1),
});

/** Turns bigint timestamps into RFC 3339 strings (the only bigints in ledger objects are timestamps). */
export function ledgerReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? formatTimestamp(value as Parameters<typeof formatTimestamp>[0]) : value;
}

/** Serialises an entry: deterministic (fixed key order), so equal entries give byte-identical objects. */
export function serializeEntry(entry: PartitionEntry): string {
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(entrySchema.shape)) ordered[key] = entry[key as keyof PartitionEntry];
  ordered.history = sortedCursors(entry.history);
  return JSON.stringify(ordered, ledgerReplacer);
}

/** Parses JSON text with a schema; every problem is named, with `what` (e.g. the object name) first. */
export function parseLedgerJson<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SluiceError('permanent', `${what} is not valid JSON: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new SluiceError('permanent', `${what} is corrupt: ${describeIssues(parsed.error).join('; ')}`);
  }
  return parsed.data;
}

/**
 * Parses a partition entry; checks too that the id is the hash of the token and the parent ids match.
 * @throws SluiceError (`permanent`) naming every problem.
 */
export function parseEntry(text: string, what = 'partition entry'): PartitionEntry {
  const entry = parseLedgerJson(text, entrySchema, what) as PartitionEntry;
  checkConsistency(entry, what);
  return entry;
}

function checkConsistency(entry: PartitionEntry, what: string): void {
  const problems: string[] = [];
  if (entry.state === 'leased' && entry.lease === null) problems.push('lease: must be set when leased');
  if (entry.state !== 'leased' && entry.lease !== null)
    problems.push(`lease: must be null when ${entry.state}`);
  if (entry.state === 'finished' && (entry.end === null || entry.childIds === null)) {
    problems.push('end, childIds: must be set when finished');
  }
  if (partitionId(entry.token) !== entry.id) problems.push('id: must be the hash of token');
  if (entry.parentTokens.map(partitionId).join() !== entry.parentIds.join()) {
    problems.push('parentIds: must be the hashes of parentTokens');
  }
  if (entry.childTokens?.map(partitionId).join() !== entry.childIds?.join()) {
    problems.push('childIds: must be the hashes of childTokens');
  }
  if (problems.length > 0) throw new SluiceError('permanent', `${what} is corrupt: ${problems.join('; ')}`);
}
