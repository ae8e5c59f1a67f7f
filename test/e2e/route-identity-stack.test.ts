/**
 * Authorization per route on the local stack (ADR-2306): the backfill function's worker route admits only the
 * tasks invoker, its operator routes everyone but the tasks invoker. Cloud Run verifies the ID token before
 * the request reaches the function; locally the tokens are the unsigned ones the Cloud Tasks emulator sends,
 * made here by the same function, so a compromised reader creating tasks signed as the tasks invoker to an
 * operator URL is what the first case sends. Callers without a token are trusted only on loopback, because
 * the local stack sets `SLUICE_CALLER_IDENTITY=trust-loopback`.
 */
process.env.METADATA_SERVER_DETECTION = 'none';

import { oidcToken } from '../../local/emulators/tasks/oidc';
import { LOCAL } from '../../local/stack-config';
import { until } from './support/failures';
import { useLocalStack } from './support/local-stack';

describe('the backfill function checks the caller per route', () => {
  let url = '';
  const bearer = (email: string) => `Bearer ${oidcToken(email, url, Date.now())}`;
  const invoker = () => bearer(LOCAL.tasksServiceAccount);
  const operator = () => bearer('ops@example.com');

  async function post(path: string, auth: Record<string, string>, body = '{}') {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  const stack = useLocalStack({ churnMs: 0 }, async () => {
    url = stack.functions.backfill!.url;
  });

  it.each([
    ['/tables/forget', JSON.stringify({ table: 'customers' })],
    ['/backfills', JSON.stringify({ tables: ['customers'] })],
    ['/dead-letters/replay', '{}'],
    ['/partitions/retry', ''],
  ])(
    'the tasks invoker calling the operator route %s is 403, naming route and caller',
    async (path, body) => {
      const out = await post(path, { authorization: invoker() }, body);
      expect(out).toEqual({
        status: 403,
        body: {
          error: {
            code: 403,
            route: path,
            caller: 'tasks-invoker',
            message: `${path} is an operator route: operators only; the caller is the tasks invoker, which may call only the worker route`,
          },
        },
      });
    },
  );

  it('an operator calling the worker route is 403; so is an unreadable token', async () => {
    const task = JSON.stringify({ job: 'j', partition: 0 });
    expect(await post('/backfills/tasks', { authorization: operator() }, task)).toMatchObject({
      status: 403,
      body: { error: { route: '/backfills/tasks', caller: 'operator' } },
    });
    expect(await post('/backfills/tasks', { authorization: 'Bearer nonsense' }, task)).toMatchObject({
      status: 403,
      body: { error: { caller: 'unreadable-token' } },
    });
  });

  it('X-Serverless-Authorization, which Cloud Run checks alone when sent, decides over Authorization', async () => {
    const headers = { 'x-serverless-authorization': invoker(), authorization: operator() };
    expect(await post('/tables/forget', headers, JSON.stringify({ table: 'customers' }))).toMatchObject({
      status: 403,
      body: { error: { caller: 'tasks-invoker' } },
    });
  });

  it("an operator's token, or none on loopback, runs the operator routes; the tasks' tokens run the worker route", async () => {
    const res = await fetch(`${url}/backfills`, { headers: { authorization: operator() } });
    expect(res.status).toBe(200);
    const started = await post('/backfills', {}, JSON.stringify({ tables: [stack.schema.customers.name] }));
    expect(started.status).toBe(202);
    // The job's partitions arrive from the Cloud Tasks emulator, with the tasks invoker's token.
    const state = await until(
      'the backfill to finish',
      async () => {
        const view = (await (await fetch(`${url}/backfills/${String(started.body.id)}`)).json()) as {
          state: string;
        };
        return ['succeeded', 'failed', 'cancelled'].includes(view.state) ? view.state : undefined;
      },
      30_000,
    );
    expect(state).toBe('succeeded');
  }, 60_000);
});
