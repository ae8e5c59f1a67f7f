/**
 * Every environment variable a function reads, in one list (each documented in docs/configuration.md; a
 * test checks both directions), and the startup warning about `SLUICE_*` variables that configure nothing,
 * with the nearest known name for a typo. A module that reads a new variable adds it here.
 */
import { CALLER_VARIABLES } from '../domain/caller';
import { ENV_VARIABLES } from '../domain/config';
import { SEAL_VARIABLES } from '../domain/dead-letter-seal';
import { LINEAGE_VARIABLES } from '../domain/lineage/settings';
import { nearest } from '../domain/suggest';
import { WRITER_VARIABLES } from '../domain/writer/config';
import { DEPLOYMENT_VARIABLES } from './settings';

/** Endpoint overrides of the local stack and tests (`endpointsFromEnv`); unset in production. */
export const ENDPOINT_VARIABLES = [
  'SLUICE_GCS_ENDPOINT',
  'SLUICE_TASKS_ENDPOINT',
  'SLUICE_BIGQUERY_REST_ENDPOINT',
  'SLUICE_BIGQUERY_WRITE_ENDPOINT',
] as const;

/** What an instance with an invalid configuration does (`./startup`, ADR-2004). */
export const ON_INVALID_CONFIG = 'SLUICE_ON_INVALID_CONFIG';

/** Variables read outside the two schemas: the reader's log context, the startup check's policy. */
const OTHER_VARIABLES = ['SLUICE_TASK_MAX_ATTEMPTS', ON_INVALID_CONFIG];

/** Every `SLUICE_*` variable any function reads. */
export const KNOWN_VARIABLES: readonly string[] = [
  ...new Set([
    ...Object.values(ENV_VARIABLES),
    ...DEPLOYMENT_VARIABLES,
    ...WRITER_VARIABLES,
    ...ENDPOINT_VARIABLES,
    ...LINEAGE_VARIABLES,
    ...SEAL_VARIABLES,
    ...CALLER_VARIABLES,
    ...OTHER_VARIABLES,
  ]),
].sort();

/** A `SLUICE_*` variable that configures nothing, and the known one it most resembles. */
export interface UnknownVariable {
  name: string;
  didYouMean?: string;
}

/** The `SLUICE_*` variables of `env` that no function reads (most likely typos), sorted. */
export function unknownVariables(env: Record<string, string | undefined>): UnknownVariable[] {
  return Object.keys(env)
    .filter((k) => k.startsWith('SLUICE_') && !KNOWN_VARIABLES.includes(k))
    .sort()
    .map((name) => {
      const near = nearest(name, KNOWN_VARIABLES);
      return near ? { name, didYouMean: near } : { name };
    });
}

/** One line per unknown variable: `<name> is not a sluice setting (did you mean <known name>?)`. */
export function describeUnknown(unknown: readonly UnknownVariable[]): string[] {
  return unknown.map(
    (u) => `${u.name} is not a sluice setting${u.didYouMean ? ` (did you mean ${u.didYouMean}?)` : ''}`,
  );
}
