/** Reading a set of environment variables through one zod schema, as every function's settings do. */
import type { z } from 'zod';
import { ConfigError } from './config';

/**
 * The set (non-empty after trimming) variables of `names` from `env`, parsed by `schema`: unset or empty
 * variables take the schema's defaults. Pure: reads nothing but `env`.
 * @throws ConfigError naming every bad variable and its rule.
 */
export function parseVariables<S extends z.ZodType>(
  env: Record<string, string | undefined>,
  names: readonly string[],
  schema: S,
): z.output<S> {
  const input: Record<string, string> = {};
  for (const key of names) {
    const v = env[key]?.trim();
    if (v) input[key] = v;
  }
  const parsed = schema.safeParse(input);
  if (!parsed.success)
    throw new ConfigError(parsed.error.issues.map((i) => ({ path: String(i.path[0]), rule: i.message })));
  return parsed.data;
}
