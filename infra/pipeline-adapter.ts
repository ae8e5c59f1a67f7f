/**
 * The one seam between the deployment and the shared pipeline configuration schema: validate
 * `sluice:pipeline` and project out of it what the deployment needs, plus the environment that makes the
 * functions parse the very same configuration.
 *
 * TEMPORARY STAND-IN: until the shared schema (`shared/domain/config.ts`) is merged, this validates a
 * minimal subset itself. Replace the body of {@link readPipeline} by a call to the shared parser; nothing
 * else in `infra/` depends on the schema.
 */
import { z } from 'zod';
import { type ConfigIssue, issuesAt } from './config-error';

/** What the deployment needs from a valid pipeline configuration. */
export interface PipelineView {
  spanner: { instance: string; database: string; stream: string };
  dataset: string;
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

const identifier = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,127}$/, 'an identifier');
const standIn = z
  .object({
    spanner: z.object({ instance: z.string().min(2), database: z.string().min(2), stream: identifier }),
    bigquery: z.object({ dataset: z.string().regex(/^[A-Za-z0-9_]{1,1024}$/, 'a dataset id') }),
    tables: z.record(
      z.string(),
      z.object({ replica: identifier.optional(), history: identifier.optional() }).strict(),
    ),
    mode: z.enum(['scheduled', 'continuous']).default('scheduled'),
    windowMs: z.number().int().min(1000).max(1_800_000).default(60_000),
  })
  .passthrough();

/** Validates `sluice:pipeline` (for `project`) and projects the deployment's view of it. */
export function readPipeline(raw: unknown, project: string): PipelineRead {
  const parsed = standIn.safeParse(raw);
  if (!parsed.success) return { ok: false, issues: issuesAt('sluice:pipeline', parsed.error.issues) };
  const p = parsed.data;
  return {
    ok: true,
    view: {
      spanner: p.spanner,
      dataset: p.bigquery.dataset,
      mode: p.mode,
      maxWindowSeconds: Math.ceil(p.windowMs / 1000),
      windowPath: 'sluice:pipeline.windowMs',
      environment: {
        SLUICE_PROJECT: project,
        SLUICE_SPANNER_INSTANCE: p.spanner.instance,
        SLUICE_SPANNER_DATABASE: p.spanner.database,
        SLUICE_CHANGE_STREAM: p.spanner.stream,
        SLUICE_DATASET: p.bigquery.dataset,
        SLUICE_TABLES: JSON.stringify(p.tables),
        SLUICE_MODE: p.mode,
        SLUICE_WINDOW_MS: String(p.windowMs),
      },
    },
  };
}
