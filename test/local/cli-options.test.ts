/** `npm start` flags: defaults, every option, and refusals that name the flag and list what is accepted. */
import { parseStartOptions, USAGE } from '../../local/cli-options';
import { FinishedPartitions, statusFrame, statusLine, type ViewState } from '../../local/live-view';
import { describeLogLine, shortLogLine } from '../../local/log-lines';
import { fromNanos } from '../../shared/domain/timestamp';

it('defaults to GoogleSQL, scheduled mode, a workload and no duration', () => {
  const o = parseStartOptions([]);
  expect(o).toMatchObject({
    help: false,
    workload: true,
    dialect: 'GOOGLE_STANDARD_SQL',
    mode: 'scheduled',
    backfill: false,
    logs: false,
    env: {},
  });
  expect(o.durationSeconds).toBeUndefined();
  expect(o.logFile).toBeUndefined();
});

it('reads every option', () => {
  const o = parseStartOptions(
    '--no-workload --dialect postgresql --mode continuous --duration 20 --seed 7 --spanner-port 9010 --reader-port 8081 --logs --log-file /x/y.log'.split(
      ' ',
    ),
  );
  expect(o).toMatchObject({
    workload: false,
    dialect: 'POSTGRESQL',
    mode: 'continuous',
    durationSeconds: 20,
    seed: 7,
    logs: true,
    logFile: '/x/y.log',
  });
  expect(o.ports).toMatchObject({ spanner: 9010, reader: 8081 });
});

it('takes --env more than once, and NAME=VALUE values containing "="', () => {
  const o = parseStartOptions([
    '--env',
    'SLUICE_LEASE_MS=20000',
    '--env=SLUICE_TABLES={"A":{"replica":"a=b"}}',
  ]);
  expect(o.env).toEqual({ SLUICE_LEASE_MS: '20000', SLUICE_TABLES: '{"A":{"replica":"a=b"}}' });
  expect(() => parseStartOptions(['--env', 'LEASE_MS=1'])).toThrow('--env: must be SLUICE_<NAME>=<value>');
  expect(() => parseStartOptions(['--env', 'SLUICE_LEASE_MSS=1'])).toThrow(
    '--env: SLUICE_LEASE_MSS is not a sluice setting (did you mean SLUICE_LEASE_MS?)',
  );
});

it('answers --help', () => {
  expect(parseStartOptions(['--help']).help).toBe(true);
});

it('refuses a flag without its value instead of reading it as 1', () => {
  expect(() => parseStartOptions(['--duration'])).toThrow('--duration needs a value');
  expect(() => parseStartOptions(['--seed', '--logs'])).toThrow('--seed needs a value');
});

it('refuses unknown flags and bad values with the usage, naming each one', () => {
  expect(() => parseStartOptions(['--dialect', 'mysql'])).toThrow(USAGE);
  expect(() => parseStartOptions(['--colour', 'red'])).toThrow('--colour: unknown flag');
  let message = '';
  try {
    parseStartOptions(['--rate', '-1', '--tick-ms', '5', 'extra']);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(message).toContain('unexpected argument "extra"');
  expect(message).toContain('--rate:');
  expect(message).toContain('--tick-ms:');
});

const state: ViewState = {
  now: fromNanos(10_000_000_000n),
  progress: {
    epoch: 1,
    state: 'running',
    reason: null,
    watermark: fromNanos(7_500_000_000n),
    partitions: { waiting: 1, ready: 0, leased: 2, finished: 3, failed: 0 },
    errors: [],
  },
  finishedSinceStart: 5,
  rows: [{ table: 'customers', rows: 4 }],
  workload: null,
  functionErrors: 0,
  lastError: null,
};

it('renders one status line for non-TTY output', () => {
  expect(statusLine(state)).toBe(
    'lag 2.5s | partitions active 2 waiting 1 finished since start 5 failed 0 | rows customers=4 | no workload | errors 0',
  );
});

it('counts each partition the reader finished once, though the ledger deletes finished entries', () => {
  const finished = new FinishedPartitions();
  const line = (fn: 'reader' | 'scheduler', message: string, partition: string) => {
    const json = {
      severity: 'INFO',
      message,
      'logging.googleapis.com/labels': { pipeline: 'sluice', partition, window: `${partition}@17` },
      end: '2025-01-01T00:00:00Z',
    };
    return { function: fn, severity: 'INFO', text: JSON.stringify(json), json };
  };
  finished.observe(line('reader', 'partition.finished', 'p1'));
  finished.observe(line('reader', 'reader.window', 'p2'));
  finished.observe(line('scheduler', 'partition.finished', 'p3'));
  finished.observe(line('reader', 'partition.finished', 'p1'));
  finished.observe(line('reader', 'partition.finished', 'p4'));
  finished.observe({ function: 'reader', severity: 'INFO', text: 'partition.finished' });
  expect(finished.count).toBe(2);
  // The frame shows this count, not the ledger's finished entries (3 here, 0 once deleted).
  expect(statusFrame({ ...state, finishedSinceStart: finished.count })[1]).toBe(
    'partitions     active 2 waiting 1 finished since start 2 failed 0',
  );
});

it('shows the error count with the latest error message', () => {
  const failing = {
    ...state,
    functionErrors: 2,
    lastError: 'reader: reader.window-failed: deadline exceeded',
  };
  expect(statusLine(failing)).toMatch(
    /errors 2 \(latest: reader: reader\.window-failed: deadline exceeded\)$/,
  );
  expect(statusFrame(failing).at(-1)).toBe('last error     reader: reader.window-failed: deadline exceeded');
});

it('prints a function log line in short form, with its fields and RFC 3339 time', () => {
  const json = {
    severity: 'ERROR',
    message: 'reader.window-failed',
    error: { kind: 'retryable', message: 'deadline exceeded\n  at x' },
    'logging.googleapis.com/labels': { pipeline: 'sluice', partition: 'p1' },
    attempt: 2,
  };
  const line = { function: 'reader' as const, severity: 'ERROR', text: JSON.stringify(json), json };
  expect(shortLogLine(line, new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 6)))).toBe(
    // Every line of the message, on one line (a reason of several lines is not cut at its first).
    '2025-01-02T03:04:05.006Z ERROR   reader: reader.window-failed: deadline exceeded   at x {"partition":"p1","attempt":2}',
  );
  expect(describeLogLine({ function: 'scheduler', severity: 'ERROR', text: 'TypeError: boom' })).toBe(
    'scheduler: TypeError: boom',
  );
});
