/**
 * The functions' log lines on the laptop: every line appended to a log file (receipt time, function, the
 * line as the function wrote it, so `jq` and `grep` work on it), a short human form for `--logs`, and the
 * one-line summary of an error the live view shows.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FunctionLogLine } from './function-process';

/** Default log file: one per run, in the system's temporary folder. */
export function defaultLogFile(): string {
  return join(tmpdir(), `sluice-local-${process.pid}.log`);
}

function errorOf(json: Record<string, unknown> | undefined): string | undefined {
  const e = json?.error;
  if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return undefined;
}

/** `<function>: <event>: <error message>` (or the raw text of an unstructured line). */
export function describeLogLine(line: FunctionLogLine): string {
  if (!line.json) return `${line.function}: ${line.text}`;
  const event = String(line.json.message ?? '');
  const error = errorOf(line.json);
  // A reason of several lines (a list of problems) reads on one line rather than stopping at its first.
  return `${line.function}: ${event}${error ? `: ${error.split('\n').join(' ')}` : ''}`;
}

const NOT_SHOWN = new Set([
  'severity',
  'message',
  'error',
  'stack_trace',
  '@type',
  'logging.googleapis.com/trace',
]);

/** The line's other fields, compact (labels flattened), cut to a terminal line's worth. */
function fieldsOf(json: Record<string, unknown> | undefined): string {
  if (!json) return '';
  const labels = (json['logging.googleapis.com/labels'] ?? {}) as Record<string, unknown>;
  const rest = Object.entries(json).filter(
    ([k]) => !NOT_SHOWN.has(k) && k !== 'logging.googleapis.com/labels',
  );
  const shown = { ...labels, ...Object.fromEntries(rest) };
  delete shown.pipeline;
  if (Object.keys(shown).length === 0) return '';
  const text = JSON.stringify(shown);
  return ` ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`;
}

/** The short form `--logs` prints: RFC 3339 receipt time, severity, function, event, error and fields. */
export function shortLogLine(line: FunctionLogLine, at: Date = new Date()): string {
  return `${at.toISOString()} ${line.severity.padEnd(7)} ${describeLogLine(line)}${fieldsOf(line.json)}`;
}

/** Appends every line to `path` (synchronously: a line is in the file before the next one arrives). */
export class LogFile {
  private fd: number | null;
  constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a');
  }

  write(line: FunctionLogLine, at: Date = new Date()): void {
    if (this.fd !== null) writeSync(this.fd, `${at.toISOString()} ${line.function} ${line.text}\n`);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
