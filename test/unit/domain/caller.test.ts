/** Authorization per route (ADR-2306): the policy from the environment and the decision per request. */
import { callerRefusal, parseCallerPolicy, tokenEmail } from '../../../shared/domain/caller';

const INVOKER = 'sluice-tasks@p.iam.gserviceaccount.com';
const jwt = (claims: object) =>
  `Bearer ${Buffer.from('{"alg":"RS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.SIGNATURE_REMOVED`;
const worker = { path: '/backfills/tasks', routeClass: 'worker' as const };
const operator = { path: '/tables/forget', routeClass: 'operator' as const };
const req = (authorization?: string, loopback = false) => ({
  serverlessAuthorization: undefined,
  authorization,
  loopback,
});

test('deployed functions default to cloud-run, which needs the tasks invoker; the local mode is explicit', () => {
  expect(() => parseCallerPolicy({})).toThrow(
    /SLUICE_TASKS_SERVICE_ACCOUNT: is required with SLUICE_CALLER_IDENTITY=cloud-run/,
  );
  expect(parseCallerPolicy({ SLUICE_TASKS_SERVICE_ACCOUNT: INVOKER })).toEqual({
    mode: 'cloud-run',
    tasksInvoker: INVOKER,
  });
  expect(parseCallerPolicy({ SLUICE_CALLER_IDENTITY: 'trust-loopback' })).toEqual({
    mode: 'trust-loopback',
    tasksInvoker: undefined,
  });
  expect(() => parseCallerPolicy({ SLUICE_CALLER_IDENTITY: 'none' })).toThrow(
    /SLUICE_CALLER_IDENTITY: must be cloud-run or trust-loopback/,
  );
});

test('the email of a token is read from its payload; a token of another shape is an error', () => {
  expect(tokenEmail(jwt({ email: INVOKER }))).toBe(INVOKER);
  expect(tokenEmail(undefined)).toBeUndefined();
  expect(tokenEmail('Basic abc')).toBeInstanceOf(Error);
  expect(tokenEmail(jwt({ sub: '1' }))).toBeInstanceOf(Error);
});

test('the worker route admits the tasks invoker only, the operator routes everyone else', () => {
  const policy = parseCallerPolicy({ SLUICE_TASKS_SERVICE_ACCOUNT: INVOKER });
  expect(callerRefusal(policy, worker, req(jwt({ email: INVOKER })))).toBeUndefined();
  expect(callerRefusal(policy, operator, req(jwt({ email: 'ops@example.com' })))).toBeUndefined();
  expect(callerRefusal(policy, operator, req(jwt({ email: INVOKER })))).toMatchObject({
    status: 403,
    route: '/tables/forget',
    caller: 'tasks-invoker',
  });
  expect(callerRefusal(policy, worker, req(jwt({ email: 'ops@example.com' })))?.caller).toBe('operator');
});

test('without a token: refused under cloud-run even on loopback; trust-loopback admits loopback only', () => {
  const deployed = parseCallerPolicy({ SLUICE_TASKS_SERVICE_ACCOUNT: INVOKER });
  expect(callerRefusal(deployed, operator, req(undefined, true))).toMatchObject({ caller: 'anonymous' });
  const local = parseCallerPolicy({
    SLUICE_CALLER_IDENTITY: 'trust-loopback',
    SLUICE_TASKS_SERVICE_ACCOUNT: INVOKER,
  });
  expect(callerRefusal(local, operator, req(undefined, true))).toBeUndefined();
  expect(callerRefusal(local, worker, req(undefined, true))).toBeUndefined();
  expect(callerRefusal(local, operator, req(undefined, false))).toMatchObject({ caller: 'anonymous' });
  // A token is checked in either mode.
  expect(callerRefusal(local, operator, req(jwt({ email: INVOKER }), true))?.caller).toBe('tasks-invoker');
});

test('X-Serverless-Authorization, the header Cloud Run verified when both are sent, decides', () => {
  const policy = parseCallerPolicy({ SLUICE_TASKS_SERVICE_ACCOUNT: INVOKER });
  const both = {
    serverlessAuthorization: jwt({ email: INVOKER }),
    authorization: jwt({ email: 'ops@example.com' }),
    loopback: false,
  };
  expect(callerRefusal(policy, operator, both)?.caller).toBe('tasks-invoker');
});
