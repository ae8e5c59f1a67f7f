/**
 * Fail fast: each function checks its configuration when its instance starts (module load), not at the
 * first request. What an invalid instance does is `SLUICE_ON_INVALID_CONFIG` (ADR-2004): `serve` (the
 * default, the local stack) answers `GET /healthz` and every other request 503 with every problem; `exit`
 * (every deployed function) throws at module load, so the functions framework exits before it listens and
 * Cloud Run's startup probe fails: such a revision never becomes ready and never takes traffic.
 */
import { parseCallerPolicy } from '../domain/caller';
import { ConfigError, type ConfigIssue, parseConfig } from '../domain/config';
import { parseSealSettings } from '../domain/dead-letter-seal';
import { parseLineageSettings } from '../domain/lineage/settings';
import { createLogger } from '../domain/log';
import { parseWriterConfig } from '../domain/writer/config';
import { installJsonErrors } from '../http/edge';
import type { HttpRequest, HttpResponse } from '../http/health';
import { parseDeploymentSettings } from './settings';
import { describeUnknown, ON_INVALID_CONFIG, unknownVariables } from './variables';

/** The functions whose configuration is checked. */
export type CheckedFunction = 'scheduler' | 'reader' | 'backfill' | 'writer';

const CHECKED: readonly CheckedFunction[] = ['scheduler', 'reader', 'backfill', 'writer'];

/** What an instance with an invalid configuration does: answer 503, or exit before it listens. */
export type InvalidConfigPolicy = 'serve' | 'exit';

const POLICIES: readonly InvalidConfigPolicy[] = ['serve', 'exit'];

/** Outcome of the startup check. */
export interface StartupCheck {
  function: CheckedFunction;
  /** One line per problem (`VARIABLE: rule`); empty when the configuration is valid. */
  problems: string[];
  /** `SLUICE_*` variables that configure nothing (warned about, not refused). */
  warnings: string[];
}

function issueLines(issues: readonly ConfigIssue[]): string[] {
  return issues.map(
    (i) => `${i.variable ?? i.path}${i.variable && i.variable !== i.path ? ` (${i.path})` : ''}: ${i.rule}`,
  );
}

function collect(problems: string[], parse: () => unknown): void {
  try {
    parse();
  } catch (err) {
    if (err instanceof ConfigError) problems.push(...issueLines(err.issues));
    else problems.push(err instanceof Error ? err.message : String(err));
  }
}

function requireSet(problems: string[], env: Record<string, string | undefined>, names: string[]): void {
  for (const name of names) if (!env[name]?.trim()) problems.push(`${name}: is required`);
}

/** The policy `env` names; `serve` when unset or not a policy (the latter is also a problem). */
export function invalidConfigPolicy(env: Record<string, string | undefined>): InvalidConfigPolicy {
  const v = env[ON_INVALID_CONFIG]?.trim();
  return POLICIES.find((p) => p === v) ?? 'serve';
}

function checkPolicy(problems: string[], env: Record<string, string | undefined>): void {
  const v = env[ON_INVALID_CONFIG]?.trim();
  if (v && !POLICIES.some((p) => p === v))
    problems.push(`${ON_INVALID_CONFIG}: must be one of ${POLICIES.join(', ')}; got ${JSON.stringify(v)}`);
}

/** Checks the environment of one function. Pure: reads only `env`. */
export function checkStartup(fn: CheckedFunction, env: Record<string, string | undefined>): StartupCheck {
  const problems: string[] = [];
  checkPolicy(problems, env);
  if (fn === 'writer') collect(problems, () => parseWriterConfig(env));
  else collect(problems, () => parseConfig(env));
  if (fn === 'backfill') requireSet(problems, env, ['SLUICE_BACKFILL_QUEUE', 'SLUICE_BACKFILL_URL']);
  if (fn === 'backfill') collect(problems, () => parseCallerPolicy(env));
  if (fn === 'scheduler' || fn === 'reader') collect(problems, () => parseDeploymentSettings(env));
  if (fn !== 'writer') collect(problems, () => parseLineageSettings(env));
  if (fn !== 'writer') collect(problems, () => parseSealSettings(env));
  const unknown = unknownVariables(env);
  // A required variable reported missing while a near spelling of it is set: say so on that line.
  const hinted = problems.map((p) => {
    const typo = unknown.find((u) => u.didYouMean && p.startsWith(`${u.didYouMean}`));
    return typo ? `${p} (${typo.name} is set: a typo?)` : p;
  });
  return { function: fn, problems: hinted, warnings: describeUnknown(unknown) };
}

/**
 * Thrown at module load by an invalid instance whose policy is `exit`: the functions framework reports a
 * module that cannot be loaded and exits 1 without listening, which fails the revision's startup probe.
 */
export class InvalidInstanceConfig extends Error {
  constructor(readonly check: StartupCheck) {
    super(
      `the ${check.function} function's configuration is invalid (${ON_INVALID_CONFIG}=exit, so this ` +
        `instance exits before it listens): ${check.problems.join('; ')}`,
    );
    this.name = 'InvalidInstanceConfig';
  }
}

/**
 * Runs the check on `process.env` and logs its outcome once (ERROR when invalid, WARNING for typos). The
 * entry module loads every function, but an instance serves only the one `SLUICE_FUNCTION` names: the others
 * are not checked there (their problems would be logged, or exit the instance, on their own instances).
 * @throws InvalidInstanceConfig when the configuration is invalid and the policy is `exit`.
 */
export function checkInstance(fn: CheckedFunction, env = process.env): StartupCheck {
  const own = CHECKED.find((f) => f === env.SLUICE_FUNCTION?.trim());
  if (own && own !== fn) return { function: fn, problems: [], warnings: [] };
  const check = checkStartup(fn, env);
  const log = createLogger((line) => process.stdout.write(`${line}\n`), {
    pipeline: env.SLUICE_PIPELINE ?? 'sluice',
  });
  if (check.warnings.length > 0)
    log.warn('config.unknown-variables', { function: fn, variables: check.warnings });
  if (check.problems.length === 0) return check;
  const policy = invalidConfigPolicy(env);
  log.error('config.invalid', undefined, { function: fn, problems: check.problems, onInvalid: policy });
  if (policy === 'exit') throw new InvalidInstanceConfig(check);
  return check;
}

/** A request handler. */
export type Handler = (req: HttpRequest, res: HttpResponse) => Promise<void> | void;

/**
 * Wraps a function's handler: with a valid configuration it is called as is (its own `/healthz` answers
 * 200); otherwise `/healthz` and every other route answer 503 with the problems.
 */
export function failFast(check: StartupCheck, handler: Handler): Handler {
  if (check.problems.length === 0) return handler;
  return (req, res) => {
    // Even a misconfigured function answers JSON to bodies the framework cannot parse (ADR-1508).
    installJsonErrors(req);
    const healthz = req.method === 'GET' && req.path === '/healthz';
    res.status(503).json(
      healthz
        ? { function: check.function, ok: false, problems: check.problems }
        : {
            error: {
              code: 503,
              kind: 'invalid-input',
              message: `the ${check.function} function's configuration is invalid: ${check.problems.join('; ')}`,
              problems: check.problems,
            },
          },
    );
  };
}
