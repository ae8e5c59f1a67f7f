/**
 * Discarding a dead letter (ADR-2202): an operator sets aside for good a letter that later changes have
 * superseded (the row is right now). The letter is kept, with who discarded it, when and why, in its content
 * and in its object's metadata, so a listing shows it without reading each letter. Shared by the stream's
 * letters and the writer's.
 */
import { formatTimestamp, type Timestamp } from './timestamp';

/** Who discarded a letter (the caller's identity), when, and why. */
export interface Discard {
  by: string;
  at: Timestamp;
  reason?: string;
}

/** Longest reason kept (metadata values share the object's 8 KiB of custom metadata). */
export const MAX_DISCARD_REASON = 500;

/** The metadata naming who discarded a letter, when and why (a listing shows them without reading it). */
export function discardMetadata(d: Discard): Record<string, string> {
  return {
    'sluice-discarded-by': d.by.slice(0, 200),
    'sluice-discarded-at': formatTimestamp(d.at),
    ...(d.reason ? { 'sluice-discard-reason': d.reason.slice(0, MAX_DISCARD_REASON) } : {}),
  };
}

/** Who discarded a listed letter, when and why, read back from its metadata ({} when not discarded). */
export function discardOf(metadata: Record<string, string>): {
  discardedBy?: string;
  discardedAt?: string;
  discardReason?: string;
} {
  const by = metadata['sluice-discarded-by'];
  if (!by) return {};
  const reason = metadata['sluice-discard-reason'];
  return {
    discardedBy: by,
    discardedAt: metadata['sluice-discarded-at'] ?? '',
    ...(reason ? { discardReason: reason } : {}),
  };
}
