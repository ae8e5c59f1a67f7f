/**
 * The metadata projection: the fields the scheduler needs, mirrored into each partition object's custom
 * metadata, which a listing returns. The scheduler thus learns N partitions from about N/1000 list calls
 * instead of N reads (DESIGN §4, invariant 7). Written with the entry in the same upload, so the two never
 * disagree.
 */
import { z } from 'zod';
import { SluiceError } from '../errors';
import { formatTimestamp } from '../timestamp';
import { describeIssues, timestampString } from '../zod-helpers';
import type { PartitionView } from './entry';

/** GCS limits custom metadata (keys + values) to 8 KiB per object. */
export const METADATA_LIMIT_BYTES = 8192;

const ids = z
  .string()
  .regex(/^([0-9a-f]{32}(,[0-9a-f]{32})*)?$/, 'must be comma-separated partition ids')
  .transform((s) => (s === '' ? [] : s.split(',')));

const optionalTs = z.union([z.literal(''), timestampString]).transform((v) => (v === '' ? null : v));

const metadataSchema = z.object({
  'sluice-id': z.string().regex(/^[0-9a-f]{32}$/, 'must be a partition id'),
  'sluice-state': z.enum(['waiting', 'ready', 'leased', 'finished', 'failed']),
  'sluice-epoch': z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number),
  'sluice-start': timestampString,
  'sluice-position': timestampString,
  'sluice-end': optionalTs,
  'sluice-lease-holder': z.string(),
  'sluice-lease-expires': optionalTs,
  'sluice-parents': ids,
  'sluice-children': z.union([z.literal('-'), ids]).transform((v) => (v === '-' ? null : v)),
  // Absent on objects written before failures were counted.
  'sluice-failures': z
    .string()
    .regex(/^\d{1,9}$/, 'must be a whole number')
    .transform(Number)
    .optional(),
  'sluice-writer': z.string().min(1),
});

/** The UTF-8 size GCS counts for custom metadata. */
export function metadataSize(md: Record<string, string>): number {
  let n = 0;
  for (const [k, v] of Object.entries(md)) n += Buffer.byteLength(k) + Buffer.byteLength(v);
  return n;
}

/**
 * The projection of an entry (or view) as string-valued custom metadata.
 * @throws SluiceError (`permanent`) if it would exceed {@link METADATA_LIMIT_BYTES} (about 200 parents or
 * children; a change stream partition has a handful).
 */
export function toMetadata(view: PartitionView): Record<string, string> {
  const md: Record<string, string> = {
    'sluice-id': view.id,
    'sluice-state': view.state,
    'sluice-epoch': String(view.epoch),
    'sluice-start': formatTimestamp(view.start),
    'sluice-position': formatTimestamp(view.position),
    'sluice-end': view.end === null ? '' : formatTimestamp(view.end),
    'sluice-lease-holder': view.lease?.holder ?? '',
    'sluice-lease-expires': view.lease ? formatTimestamp(view.lease.expiresAt) : '',
    'sluice-parents': view.parentIds.join(','),
    // `-` = not recorded yet (not finished), distinct from "finished with no children".
    'sluice-children': view.childIds === null ? '-' : view.childIds.join(','),
    'sluice-failures': String(view.failures),
    'sluice-writer': view.writer,
  };
  const size = metadataSize(md);
  if (size > METADATA_LIMIT_BYTES) {
    throw new SluiceError(
      'permanent',
      `metadata of partition ${view.id} would be ${size} bytes, over the ${METADATA_LIMIT_BYTES}-byte limit`,
    );
  }
  return md;
}

/**
 * Reads a view back from listed metadata (other keys are ignored).
 * @throws SluiceError (`permanent`) naming every missing or malformed field.
 */
export function fromMetadata(
  md: Record<string, string | undefined>,
  what = 'partition metadata',
): PartitionView {
  const parsed = metadataSchema.safeParse(md);
  if (!parsed.success) {
    throw new SluiceError('permanent', `${what} is corrupt: ${describeIssues(parsed.error).join('; ')}`);
  }
  const d = parsed.data;
  const holder = d['sluice-lease-holder'];
  const expiresAt = d['sluice-lease-expires'];
  if ((holder === '') !== (expiresAt === null)) {
    throw new SluiceError('permanent', `${what} is corrupt: lease holder and expiry must be set together`);
  }
  return {
    id: d['sluice-id'],
    state: d['sluice-state'],
    epoch: d['sluice-epoch'],
    start: d['sluice-start'],
    position: d['sluice-position'],
    end: d['sluice-end'],
    lease: expiresAt === null ? null : { holder, expiresAt },
    parentIds: d['sluice-parents'],
    childIds: d['sluice-children'],
    failures: d['sluice-failures'] ?? 0,
    writer: d['sluice-writer'],
  };
}

/** The view part of an entry (drops the fields the scheduler does not need). */
export function viewOf(entry: PartitionView): PartitionView {
  const { id, state, epoch, start, position, end, lease, parentIds, childIds, failures, writer } = entry;
  return { id, state, epoch, start, position, end, lease, parentIds, childIds, failures, writer };
}
