/**
 * Fail fast: a function checks its configuration when its instance starts; while it is invalid `/healthz`
 * answers 503 with every problem (what Cloud Run's startup probe sees) and so does every other route. The
 * warning about unknown variables knows every variable the functions read and names the nearest one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { HttpRequest } from '../../shared/http/health';
import { checkStartup, failFast } from '../../shared/wiring/startup';
import { KNOWN_VARIABLES, unknownVariables } from '../../shared/wiring/variables';
import { BACKFILL_ENV, fakeResponse } from './support/fakes';

const ROOT = join(__dirname, '..', '..');

const ENV = {
  ...BACKFILL_ENV,
  // The backfill function's worker route admits only this account (ADR-2306); the deployment always sets it.
  SLUICE_TASKS_SERVICE_ACCOUNT: 'tasks@my-project.iam.gserviceaccount.com',
  SLUICE_GCS_ENDPOINT: 'http://127.0.0.1:1',
  SLUICE_TASKS_ENDPOINT: '127.0.0.1:2',
  SLUICE_BIGQUERY_REST_ENDPOINT: 'http://127.0.0.1:3',
  SLUICE_BIGQUERY_WRITE_ENDPOINT: '127.0.0.1:4',
};

function call(handler: ReturnType<typeof failFast>, method: string, path: string) {
  const res = fakeResponse();
  const req: HttpRequest = { method, path, header: () => undefined };
  return Promise.resolve(handler(req, res)).then(() => res);
}

it('a valid environment has no problems and no warnings, endpoint overrides included', () => {
  for (const fn of ['scheduler', 'reader', 'backfill'] as const) {
    expect(checkStartup(fn, ENV)).toEqual({ function: fn, problems: [], warnings: [] });
  }
});

it.each(['scheduler', 'reader', 'backfill'] as const)(
  'an invalid %s answers /healthz and every route 503 with every problem',
  async (fn) => {
    const check = checkStartup(fn, { ...ENV, SLUICE_WINDOW_MAX_MS: 'soon', SLUICE_PROJECT: '' });
    expect(check.problems).toEqual(
      expect.arrayContaining([
        'SLUICE_PROJECT (project): is required',
        expect.stringMatching(/^SLUICE_WINDOW_MAX_MS \(window\.maxMs\): must be a whole number/),
      ]),
    );
    const inner = jest.fn();
    const handler = failFast(check, inner);
    const health = await call(handler, 'GET', '/healthz');
    expect(health.code).toBe(503);
    expect(health.body).toEqual({ function: fn, ok: false, problems: check.problems });
    const other = await call(handler, 'POST', '/');
    expect(other.code).toBe(503);
    expect(JSON.stringify(other.body)).toContain(`the ${fn} function's configuration is invalid`);
    expect(inner).not.toHaveBeenCalled();
  },
);

it('names the deployment settings the backfill function needs', () => {
  const { SLUICE_BACKFILL_URL: _, ...env } = ENV;
  expect(checkStartup('backfill', env).problems).toEqual(['SLUICE_BACKFILL_URL: is required']);
  const { SLUICE_TASKS_SERVICE_ACCOUNT: _account, ...anyCaller } = ENV;
  expect(checkStartup('backfill', anyCaller).problems).toEqual([
    'SLUICE_TASKS_SERVICE_ACCOUNT: is required with SLUICE_CALLER_IDENTITY=cloud-run: the worker route admits only that account',
  ]);
  expect(
    checkStartup('backfill', { ...anyCaller, SLUICE_CALLER_IDENTITY: 'trust-loopback' }).problems,
  ).toEqual([]);
});

it('points a typo at the variable it was meant to be', () => {
  const { SLUICE_SPANNER_INSTANCE: _, ...env } = ENV;
  const check = checkStartup('reader', { ...env, SLUICE_SPANNER_INSTANS: 'inst' });
  expect(check.warnings).toEqual([
    'SLUICE_SPANNER_INSTANS is not a sluice setting (did you mean SLUICE_SPANNER_INSTANCE?)',
  ]);
  expect(check.problems).toEqual([
    'SLUICE_SPANNER_INSTANCE (spanner.instance): is required (SLUICE_SPANNER_INSTANS is set: a typo?)',
  ]);
  expect(unknownVariables({ SLUICE_COLOUR: 'red', PATH: '/bin' })).toEqual([{ name: 'SLUICE_COLOUR' }]);
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : full.endsWith('.ts') ? [full] : [];
  });
}

it('knows every SLUICE_* variable the functions read, and each is documented', () => {
  const read = new Set(
    ['shared', 'functions']
      .flatMap((d) => sources(join(ROOT, d)))
      .flatMap((f) => readFileSync(f, 'utf8').match(/SLUICE_[A-Z0-9_]*[A-Z0-9]/g) ?? []),
  );
  expect([...read].filter((v) => !KNOWN_VARIABLES.includes(v))).toEqual([]);
  const docs = ['configuration.md', 'local.md', 'writer.md']
    .map((d) => readFileSync(join(ROOT, 'docs', d), 'utf8'))
    .join('\n');
  expect(KNOWN_VARIABLES.filter((v) => !docs.includes(`\`${v}\``))).toEqual([]);
});
