/**
 * Request options shared by the Spanner adapters: the port's priority names → the API's enum names, and the
 * `PreciseDate` of an exact timestamp (built from RFC 3339 text so no nanosecond is lost on the way).
 */
import { PreciseDate } from '@google-cloud/precise-date';
import { formatTimestamp, type Timestamp } from '../../domain/timestamp';

/** Request priority as the ports name it. */
export type Priority = 'low' | 'medium' | 'high';

/** The API's name for a priority, as `requestOptions.priority` takes it. */
export function apiPriority(priority: Priority): 'PRIORITY_LOW' | 'PRIORITY_MEDIUM' | 'PRIORITY_HIGH' {
  return priority === 'high' ? 'PRIORITY_HIGH' : priority === 'medium' ? 'PRIORITY_MEDIUM' : 'PRIORITY_LOW';
}

/** A nanosecond-exact `PreciseDate` for a read timestamp bound. */
export function preciseDateOf(t: Timestamp): PreciseDate {
  return new PreciseDate(formatTimestamp(t));
}
