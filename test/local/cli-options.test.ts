/** `npm start` flags: defaults, every option, and a refusal that lists what is accepted. */
import { parseStartOptions, USAGE } from '../../local/cli-options';
import '../../local/start';
import { statusLine } from '../../local/live-view';
import { fromNanos } from '../../shared/domain/timestamp';

it('defaults to GoogleSQL, scheduled mode, a workload and no duration', () => {
  const o = parseStartOptions([]);
  expect(o).toMatchObject({
    workload: true,
    dialect: 'GOOGLE_STANDARD_SQL',
    mode: 'scheduled',
    backfill: false,
  });
  expect(o.durationSeconds).toBeUndefined();
});

it('reads every option', () => {
  const o = parseStartOptions(
    '--no-workload --dialect postgresql --mode continuous --duration 20 --seed 7 --spanner-port 9010 --reader-port 8081'.split(
      ' ',
    ),
  );
  expect(o).toMatchObject({
    workload: false,
    dialect: 'POSTGRESQL',
    mode: 'continuous',
    durationSeconds: 20,
    seed: 7,
  });
  expect(o.ports).toMatchObject({ spanner: 9010, reader: 8081 });
});

it('refuses unknown flags and bad values with the usage', () => {
  expect(() => parseStartOptions(['--dialect', 'mysql'])).toThrow(USAGE);
  expect(() => parseStartOptions(['--colour'])).toThrow(/colour/);
});

it('renders one status line for non-TTY output', () => {
  const line = statusLine({
    now: fromNanos(10_000_000_000n),
    progress: {
      epoch: 1,
      watermark: fromNanos(7_500_000_000n),
      partitions: { waiting: 1, ready: 0, leased: 2, finished: 3, failed: 0 },
      errors: [],
    },
    rows: [{ table: 'customers', rows: 4 }],
    workload: null,
    functionErrors: 0,
    lastError: null,
  });
  expect(line).toBe(
    'lag 2.5s | partitions active 2 waiting 1 finished 3 failed 0 | rows customers=4 | no workload | errors 0',
  );
});
