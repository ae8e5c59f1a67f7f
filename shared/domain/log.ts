/**
 * Structured logging in Cloud Logging's JSON shape: one JSON object per line on stdout, which Cloud Run turns
 * into a log entry (`severity`, `message`, `logging.googleapis.com/labels`, …). Pure formatting; where the line
 * goes is a sink function, so tests capture lines and production writes to stdout.
 */
import { classifyError } from './errors';
import { type LogValues, markedMessage, redact, redactDeep } from './log-values';

/** Cloud Logging severities the project uses. */
export type Severity = 'DEBUG' | 'INFO' | 'NOTICE' | 'WARNING' | 'ERROR' | 'CRITICAL';

const RANK: Record<Severity, number> = { DEBUG: 0, INFO: 1, NOTICE: 2, WARNING: 3, ERROR: 4, CRITICAL: 5 };

/** The ids an operator filters by; all optional, carried as labels. */
export interface LogContext {
  pipeline?: string;
  partition?: string;
  window?: string;
  task?: string;
  /** 1-based attempt number of the task. */
  attempt?: number;
  /** Maximum attempts of the queue (`-1` or absent: unlimited). */
  maxAttempts?: number;
  /** `projects/<project>/traces/<trace id>`, to group a request's lines in Cloud Logging. */
  trace?: string;
}

/** Extra structured fields of one line (values must be JSON-friendly; bigints become strings). */
export type LogFields = Record<string, unknown>;

/** A logger bound to a context. */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  notice(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  /** Logs at ERROR; with `err`, adds its kind, message and stack (picked up by Error Reporting). */
  error(message: string, err?: unknown, fields?: LogFields): void;
  /** A logger whose context is this one's plus `context`. */
  child(context: LogContext): Logger;
}

/** The labels of a context: string values only, as Cloud Logging requires. */
export function labelsOf(context: LogContext): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const key of ['pipeline', 'partition', 'window', 'task'] as const) {
    const v = context[key];
    if (v !== undefined) labels[key] = v;
  }
  if (context.attempt !== undefined) {
    const max = context.maxAttempts;
    labels.attempt = max === undefined || max < 0 ? String(context.attempt) : `${context.attempt} of ${max}`;
  }
  return labels;
}

const REPORTED_ERROR_EVENT =
  'type.googleapis.com/google.devtools.clouderrorreporting.v1beta1.ReportedErrorEvent';

function jsonSafe(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}

/**
 * The error's message as logged under `values`, and its stack with the same header: the stack opens with
 * the plain message, row values included.
 */
function loggedError(err: unknown, values: LogValues): { message: string; stack?: string } {
  const message = redact(markedMessage(err), values);
  if (!(err instanceof Error) || !err.stack) return { message };
  const stack = err.message === message ? err.stack : err.stack.replace(err.message, message);
  return { message, stack };
}

/**
 * Formats one log line (no trailing newline). Fields never override `severity`, `message` or the labels.
 * Row values and keys marked in the fields or the error (log-values.ts) are shown as `values` allows
 * (`SLUICE_LOG_VALUES`, default none): the one place where the logs are redacted.
 */
export function formatLogLine(
  severity: Severity,
  message: string,
  context: LogContext,
  fields: LogFields = {},
  err?: unknown,
  values: LogValues = 'none',
): string {
  const entry: Record<string, unknown> = { ...(redactDeep(fields, values) as LogFields), severity, message };
  const labels = labelsOf(context);
  if (Object.keys(labels).length > 0) entry['logging.googleapis.com/labels'] = labels;
  if (context.trace) entry['logging.googleapis.com/trace'] = context.trace;
  if (err !== undefined) {
    const logged = loggedError(err, values);
    entry.error = { kind: classifyError(err), message: logged.message };
    if (logged.stack) {
      entry.stack_trace = logged.stack;
      entry['@type'] = REPORTED_ERROR_EVENT;
    }
  }
  try {
    return JSON.stringify(entry, jsonSafe);
  } catch {
    // A circular field must not lose the line: keep what an operator needs.
    return JSON.stringify({
      severity,
      message,
      'logging.googleapis.com/labels': labels,
      unserializable: true,
    });
  }
}

/**
 * Creates a logger writing formatted lines to `sink` (e.g. `(l) => process.stdout.write(l + '\n')`);
 * `values` is `SLUICE_LOG_VALUES` (what of a row its lines may quote).
 */
export function createLogger(
  sink: (line: string) => void,
  context: LogContext = {},
  minSeverity: Severity = 'INFO',
  values: LogValues = 'none',
): Logger {
  const emit = (severity: Severity, message: string, fields?: LogFields, err?: unknown) => {
    if (RANK[severity] >= RANK[minSeverity])
      sink(formatLogLine(severity, message, context, fields, err, values));
  };
  return {
    debug: (m, f) => emit('DEBUG', m, f),
    info: (m, f) => emit('INFO', m, f),
    notice: (m, f) => emit('NOTICE', m, f),
    warn: (m, f) => emit('WARNING', m, f),
    error: (m, err, f) => emit('ERROR', m, f, err),
    child: (more) => createLogger(sink, { ...context, ...more }, minSeverity, values),
  };
}
