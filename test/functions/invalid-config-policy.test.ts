/**
 * What an instance with an invalid configuration does (`SLUICE_ON_INVALID_CONFIG`, ADR-2004): `serve` answers
 * 503 with the problems; `exit` — what the deployment sets — refuses to load, so the functions framework never
 * listens and Cloud Run's startup probe keeps the revision from serving. Each instance checks only the
 * function it is (`SLUICE_FUNCTION`), although the entry module loads all four.
 */
import {
  checkInstance,
  checkStartup,
  InvalidInstanceConfig,
  invalidConfigPolicy,
} from '../../shared/wiring/startup';
import { BACKFILL_ENV } from './support/fakes';

const VALID = BACKFILL_ENV;
const BROKEN = { ...VALID, SLUICE_PROJECT: '', SLUICE_WINDOW_MAX_MS: 'soon' };

/** The JSON lines `checkInstance` logs while `run` runs. */
function logged(run: () => void): Array<Record<string, unknown>> {
  const lines: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    run();
  } finally {
    spy.mockRestore();
  }
  return lines
    .flatMap((l) => l.split('\n'))
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

it.each(['scheduler', 'reader', 'backfill', 'writer'] as const)(
  'exit: an invalid %s refuses to load, naming every problem, after logging them once',
  (fn) => {
    const env = { ...BROKEN, SLUICE_ON_INVALID_CONFIG: 'exit', SLUICE_FUNCTION: fn };
    let thrown: unknown;
    const lines = logged(() => {
      try {
        checkInstance(fn, env);
      } catch (err) {
        thrown = err;
      }
    });
    expect(thrown).toBeInstanceOf(InvalidInstanceConfig);
    const problems = checkStartup(fn, env).problems;
    expect(problems).toContainEqual(expect.stringMatching(/^SLUICE_PROJECT( \(project\))?: is required$/));
    expect((thrown as InvalidInstanceConfig).check.problems).toEqual(problems);
    expect((thrown as Error).message).toBe(
      `the ${fn} function's configuration is invalid (SLUICE_ON_INVALID_CONFIG=exit, so this instance ` +
        `exits before it listens): ${problems.join('; ')}`,
    );
    const invalid = lines.filter((l) => l.message === 'config.invalid');
    expect(invalid).toHaveLength(1);
    expect(invalid[0]).toMatchObject({ severity: 'ERROR', function: fn, problems, onInvalid: 'exit' });
  },
);

it('exit: a valid instance loads as usual', () => {
  const env = { ...VALID, SLUICE_ON_INVALID_CONFIG: 'exit', SLUICE_FUNCTION: 'reader' };
  let check: ReturnType<typeof checkInstance> | undefined;
  expect(logged(() => (check = checkInstance('reader', env)))).toEqual([]);
  expect(check).toEqual({ function: 'reader', problems: [], warnings: [] });
});

it('serve (the default): an invalid instance loads and keeps its problems for the 503 answers', () => {
  for (const policy of [undefined, 'serve']) {
    const env = {
      ...BROKEN,
      SLUICE_FUNCTION: 'scheduler',
      ...(policy ? { SLUICE_ON_INVALID_CONFIG: policy } : {}),
    };
    let check: ReturnType<typeof checkInstance> | undefined;
    const lines = logged(() => (check = checkInstance('scheduler', env)));
    expect(check?.problems).toContain('SLUICE_PROJECT (project): is required');
    expect(lines.filter((l) => l.message === 'config.invalid')[0]).toMatchObject({ onInvalid: 'serve' });
  }
});

it('a misspelt policy is itself a problem, and the instance serves its 503 rather than guess', () => {
  const env = { ...VALID, SLUICE_ON_INVALID_CONFIG: 'exti' };
  expect(invalidConfigPolicy(env)).toBe('serve');
  expect(checkStartup('reader', env).problems).toEqual([
    'SLUICE_ON_INVALID_CONFIG: must be one of serve, exit; got "exti"',
  ]);
  let check: ReturnType<typeof checkInstance> | undefined;
  logged(() => (check = checkInstance('reader', env)));
  expect(check?.problems).toHaveLength(1);
});

it("an instance checks only its own function: another function's module loaded beside it stays quiet", () => {
  // The reader's instance loads the writer's module too; only the reader is served there.
  const env = { ...BROKEN, SLUICE_ON_INVALID_CONFIG: 'exit', SLUICE_FUNCTION: 'reader' };
  let check: ReturnType<typeof checkInstance> | undefined;
  expect(logged(() => (check = checkInstance('writer', env)))).toEqual([]);
  expect(check).toEqual({ function: 'writer', problems: [], warnings: [] });
  // Without SLUICE_FUNCTION (tests, a single function run by hand) every function is checked.
  const { SLUICE_FUNCTION: _, ...anonymous } = env;
  expect(() => logged(() => checkInstance('writer', anonymous))).toThrow(InvalidInstanceConfig);
  // A SLUICE_FUNCTION that names no function does not switch the check off.
  expect(() => logged(() => checkInstance('writer', { ...env, SLUICE_FUNCTION: 'writr' }))).toThrow(
    InvalidInstanceConfig,
  );
});
