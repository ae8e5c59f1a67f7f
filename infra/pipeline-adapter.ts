/**
 * The one seam between the deployment and the shared pipeline configuration schema: validate
 * `sluice:pipeline` with it, project out what the deployment needs, and produce the environment from which
 * the functions parse the very same configuration.
 */

import { ConfigError, ENV_VARIABLES, type PipelineConfig, parseConfigObject } from '../shared/domain/config';
import { tableRulesJson } from '../shared/domain/table-rules';
import { formatTimestamp } from '../shared/domain/timestamp';
import type { ConfigIssue } from './config-error';

/** What the deployment needs from a valid pipeline configuration. */
export interface PipelineView {
  spanner: { instance: string; database: string; stream: string };
  dataset: string;
  ledgerBucket: string;
  mode: 'scheduled' | 'continuous';
  /** Longest window one reader invocation runs, in seconds (sizes the reader's timeout). */
  maxWindowSeconds: number;
  /** Stack config path of the setting behind {@link maxWindowSeconds}, for error messages. */
  windowPath: string;
  /** Environment variables from which the functions parse this same configuration. */
  environment: Record<string, string>;
}

/** Outcome of reading `sluice:pipeline`. */
export type PipelineRead = { ok: true; view: PipelineView } | { ok: false; issues: ConfigIssue[] };

const AT = 'sluice:pipeline';

/**
 * Validates `sluice:pipeline`. The project defaults to `gcp:project` (and must equal it), the ledger bucket
 * to `defaultBucket`: the stack file need not repeat what the deployment already knows.
 */
export function readPipeline(raw: unknown, project: string, defaultBucket: string): PipelineRead {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: AT, message: 'required: the pipeline configuration object' }] };
  }
  const given = raw as Record<string, unknown>;
  if (given.project !== undefined && given.project !== project) {
    return { ok: false, issues: [{ path: `${AT}.project`, message: `must equal gcp:project (${project})` }] };
  }
  let config: PipelineConfig;
  try {
    config = parseConfigObject({ project, ledger: { bucket: defaultBucket }, ...given });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { ok: false, issues: err.issues.map((i) => ({ path: `${AT}.${i.path}`, message: i.rule })) };
  }
  return { ok: true, view: viewOf(config) };
}

function viewOf(c: PipelineConfig): PipelineView {
  return {
    spanner: c.spanner,
    dataset: c.bigquery.dataset,
    ledgerBucket: c.ledger.bucket,
    mode: c.mode,
    maxWindowSeconds: Math.ceil(c.window.maxMs / 1000),
    windowPath: `${AT}.window.maxMs`,
    environment: pipelineEnvironment(c),
  };
}

/** The inverse of the shared `parseConfig`: one variable per configuration path, every value explicit. */
export function pipelineEnvironment(c: PipelineConfig): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [path, variable] of Object.entries(ENV_VARIABLES)) {
    // `SLUICE_TABLES` also holds the all-tables rule and the exclusions, which parse into fields of their own.
    const value =
      path === 'tables'
        ? tableRulesJson(c)
        : path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], c);
    if (value !== undefined) env[variable] = envValue(path, value);
  }
  return env;
}

function envValue(path: string, value: unknown): string {
  if (path === 'tables') return JSON.stringify(value);
  if (path === 'startAt') {
    const s = value as PipelineConfig['startAt'];
    return s.kind === 'timestamp' ? formatTimestamp(s.at) : s.kind;
  }
  return String(value);
}
