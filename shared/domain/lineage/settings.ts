/**
 * Lineage settings from the environment (pure; the environment is passed in): whether run events go to the
 * Data Lineage API besides the log, in which location, and how often a running pipeline sends a heartbeat.
 */
import { z } from 'zod';
import { ConfigError } from '../config';
import { parseVariables } from '../env-variables';
import { millis } from '../zod-helpers';

/** Validated lineage settings. */
export interface LineageSettings {
  /** `log`: a structured log line per run event only; `api`: also sent to the Data Lineage API. */
  target: 'log' | 'api';
  /** The Data Lineage API location (`us`, `europe-west1`, …); set whenever `target` is `api`. */
  location: string | undefined;
  /** How often a running pipeline sends a RUNNING event. */
  heartbeatMs: number;
  /** A `host:port` replacing the API's endpoint (the local emulator); insecure channel. */
  endpoint: string | undefined;
}

const LOCATION = /^[a-z]+(?:-[a-z]+[0-9]*)?$/;

const schema = z.strictObject({
  SLUICE_LINEAGE: z.enum(['log', 'api'], 'must be log or api').default('log'),
  SLUICE_LINEAGE_LOCATION: z
    .string()
    .regex(LOCATION, 'must be a location such as us or europe-west1')
    .optional(),
  SLUICE_LINEAGE_HEARTBEAT_MS: millis(10_000, 86_400_000, 300_000),
  SLUICE_LINEAGE_ENDPOINT: z
    .string()
    .regex(/^[^:/\s]+:\d+$/, 'must be host:port')
    .optional(),
  SLUICE_REGION: z.string().optional(),
});

/** The variables {@link parseLineageSettings} reads. */
export const LINEAGE_VARIABLES = Object.keys(schema.shape).filter((k) => k !== 'SLUICE_REGION');

/** Parses the lineage settings. @throws ConfigError naming every bad variable. */
export function parseLineageSettings(env: Record<string, string | undefined>): LineageSettings {
  const d = parseVariables(env, Object.keys(schema.shape), schema);
  // Lineage is recorded where the data is; the functions' region is the nearest default.
  const location = d.SLUICE_LINEAGE_LOCATION ?? d.SLUICE_REGION;
  if (d.SLUICE_LINEAGE === 'api' && !location) {
    throw new ConfigError([
      { path: 'SLUICE_LINEAGE_LOCATION', rule: 'is required with SLUICE_LINEAGE=api (or set SLUICE_REGION)' },
    ]);
  }
  return {
    target: d.SLUICE_LINEAGE,
    location,
    heartbeatMs: d.SLUICE_LINEAGE_HEARTBEAT_MS,
    endpoint: d.SLUICE_LINEAGE_ENDPOINT,
  };
}
