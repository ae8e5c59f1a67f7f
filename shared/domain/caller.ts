/**
 * Authorization per route of the backfill function (ADR-2306). Its service takes two kinds of callers: Cloud
 * Tasks delivering snapshot partitions to the worker route, as the tasks invoker account, and operators on
 * every other route. Cloud Run IAM admits both to the whole service, so each request's verified identity is
 * checked against its route here. Cloud Run verifies the Google-signed ID token before the request reaches
 * the code and forwards it: in `X-Serverless-Authorization` when the caller sent that header (Cloud Run then
 * checks only it), else in `Authorization` (https://cloud.google.com/run/docs/authenticating/service-to-service).
 * The token's signature is therefore not checked again: its `email` claim is read as is. Behind anything but
 * Cloud Run IAM that would trust a forged token; that case is out of scope (docs/security.md). Pure: the
 * environment and the request's headers are passed in.
 */
import { z } from 'zod';
import { ConfigError } from './config';
import { parseVariables } from './env-variables';

/** How callers are identified: by Cloud Run's verified token, or (local stack) also by a loopback address. */
export type CallerMode = 'cloud-run' | 'trust-loopback';

/** The policy of one backfill function instance. */
export interface CallerPolicy {
  mode: CallerMode;
  /** The account Cloud Tasks signs worker requests as; the only one the worker route admits. */
  tasksInvoker: string | undefined;
}

/** The routes' two classes. */
export type RouteClass = 'worker' | 'operator';

/** The variables {@link parseCallerPolicy} reads. */
export const CALLER_VARIABLES = ['SLUICE_CALLER_IDENTITY', 'SLUICE_TASKS_SERVICE_ACCOUNT'] as const;

const schema = z.strictObject({
  SLUICE_CALLER_IDENTITY: z
    .enum(['cloud-run', 'trust-loopback'], 'must be cloud-run or trust-loopback')
    .default('cloud-run'),
  SLUICE_TASKS_SERVICE_ACCOUNT: z.email('must be a service account e-mail').optional(),
});

/** Parses the caller policy. @throws ConfigError naming every bad variable. */
export function parseCallerPolicy(env: Record<string, string | undefined>): CallerPolicy {
  const d = parseVariables(env, CALLER_VARIABLES, schema);
  if (d.SLUICE_CALLER_IDENTITY === 'cloud-run' && !d.SLUICE_TASKS_SERVICE_ACCOUNT)
    throw new ConfigError([
      {
        path: 'SLUICE_TASKS_SERVICE_ACCOUNT',
        rule: 'is required with SLUICE_CALLER_IDENTITY=cloud-run: the worker route admits only that account',
      },
    ]);
  return { mode: d.SLUICE_CALLER_IDENTITY, tasksInvoker: d.SLUICE_TASKS_SERVICE_ACCOUNT };
}

/** The e-mail of a bearer token's payload; undefined without a token, an Error when it cannot be read. */
export function tokenEmail(header: string | undefined): string | undefined | Error {
  if (header === undefined || header.trim() === '') return undefined;
  const m = /^Bearer\s+([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]*)$/i.exec(header.trim());
  if (!m) return new Error('the identity token is not a bearer JWT');
  try {
    const claims = JSON.parse(Buffer.from(m[2]!, 'base64url').toString('utf8')) as { email?: unknown };
    if (typeof claims.email === 'string' && claims.email !== '') return claims.email;
  } catch {
    // Fall through: an unreadable payload names no one.
  }
  return new Error('the identity token names no e-mail');
}

/** What a request presents: the identity headers Cloud Run forwards and whether it came over loopback. */
export interface CallerRequest {
  serverlessAuthorization: string | undefined;
  authorization: string | undefined;
  loopback: boolean;
}

/** Who a caller is, as far as the routes care. */
export type CallerClass = 'tasks-invoker' | 'operator' | 'anonymous' | 'unreadable-token';

/** A refusal: 403 with a message naming the route and the caller's class. */
export interface CallerRefusal {
  status: 403;
  message: string;
  route: string;
  caller: CallerClass;
}

/**
 * Whether the caller may use a route of `routeClass`: the worker route admits only the tasks invoker, the
 * operator routes everyone but it. Without a token only `trust-loopback` admits, and only over loopback.
 */
export function callerRefusal(
  policy: CallerPolicy,
  route: { path: string; routeClass: RouteClass },
  req: CallerRequest,
): CallerRefusal | undefined {
  // Cloud Run checks only X-Serverless-Authorization when it is sent: that is the identity it verified.
  const email = tokenEmail(req.serverlessAuthorization ?? req.authorization);
  const refuse = (caller: CallerClass, why: string): CallerRefusal => ({
    status: 403,
    message: `${route.path} is ${route.routeClass === 'worker' ? 'the worker' : 'an operator'} route: ${why}`,
    route: route.path,
    caller,
  });
  if (email instanceof Error) return refuse('unreadable-token', email.message);
  if (email === undefined) {
    if (policy.mode === 'trust-loopback' && req.loopback) return undefined;
    return refuse('anonymous', 'the request carries no identity token (Cloud Run IAM forwards the caller’s)');
  }
  const invoker = email === policy.tasksInvoker;
  if (route.routeClass === 'worker' && !invoker)
    return refuse('operator', 'only the tasks invoker may call it; the caller is an operator identity');
  if (route.routeClass === 'operator' && invoker)
    return refuse(
      'tasks-invoker',
      'operators only; the caller is the tasks invoker, which may call only the worker route',
    );
  return undefined;
}
