/**
 * Change-stream options that hide changes from the pipeline, checked against the configured targets — at
 * startup and in every reader window. A hidden change cannot be replayed: the stream never recorded it. So a
 * stream that hides inserts, updates, deletes, TTL deletes or excluded transactions is refused unless the
 * configuration accepts that option on purpose (`SLUICE_ACCEPT_STREAM_OPTIONS`), and an option that starts
 * hiding changes while the pipeline runs stops the pipeline with a reason naming it.
 */
import type { Dialect } from './change-record';

/** The options a configuration may accept on purpose. */
export const ACCEPTABLE_STREAM_OPTIONS = [
  'exclude_insert',
  'exclude_update',
  'exclude_delete',
  'exclude_ttl_deletes',
  'allow_txn_exclusion',
] as const;

/** One option that hides changes. */
export type HidingOption = (typeof ACCEPTABLE_STREAM_OPTIONS)[number];

/** What each option hides, as the refusal says it. */
const HIDES: Record<HidingOption, string> = {
  exclude_insert: 'the stream does not record inserts: new rows would never reach the replica or the history',
  exclude_update:
    'the stream does not record updates: changed rows would keep their old values in the replica, and the history would miss every update',
  exclude_delete:
    'the stream does not record deletes: deleted rows would stay in the replica forever, and the history would miss every delete',
  exclude_ttl_deletes:
    'the stream does not record rows deleted by a row deletion policy (TTL): they would stay in the replica, and the history would miss those deletes. A replica that keeps expired rows is what some pipelines want',
  allow_txn_exclusion:
    'the stream skips transactions that set exclude_txn_from_change_streams: their changes would never reach the replica or the history',
};

/** The hiding options that are on (`true` in INFORMATION_SCHEMA.CHANGE_STREAM_OPTIONS; absent is off). */
export function hidingOptions(raw: Record<string, string>): HidingOption[] {
  return ACCEPTABLE_STREAM_OPTIONS.filter((o) => (raw[o] ?? '').trim().toLowerCase() === 'true');
}

function alterStatement(dialect: Dialect, stream: string, option: HidingOption): string {
  return dialect === 'POSTGRESQL'
    ? `ALTER CHANGE STREAM ${stream} SET (${option} = false)`
    : `ALTER CHANGE STREAM ${stream} SET OPTIONS (${option} = false)`;
}

/**
 * One line per hiding option that is on and not accepted: what it hides and the two fixes (turn it off, or
 * accept it). Empty when the stream hides nothing the configuration cares about.
 */
export function streamOptionProblems(
  raw: Record<string, string>,
  accepted: readonly string[],
  stream: string,
  dialect: Dialect,
): string[] {
  return hidingOptions(raw)
    .filter((o) => !accepted.includes(o))
    .map(
      (o) =>
        `${o} = true: ${HIDES[o]}. Fix: ${alterStatement(dialect, stream, o)}, or accept it with SLUICE_ACCEPT_STREAM_OPTIONS=${o}`,
    );
}
