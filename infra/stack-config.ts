/** Reads the raw stack configuration from Pulumi config; validation happens in `settings.ts`. */
import * as pulumi from '@pulumi/pulumi';
import { DEPLOYMENT_KEYS, STACK_KEYS } from './deployment-schema';
import type { StackConfigInput } from './settings';

/**
 * Reads `gcp:project`, `gcp:region`, `sluice:pipeline` and the deployment keys, absent keys left out, plus
 * the names of any other `sluice:*` key (a typo would otherwise fall back to a default without a word).
 */
export function readStackConfig(): StackConfigInput {
  const gcp = new pulumi.Config('gcp');
  const sluice = new pulumi.Config('sluice');
  const unknownKeys = Object.keys(pulumi.runtime.allConfig())
    .filter((k) => k.startsWith('sluice:'))
    .map((k) => k.slice('sluice:'.length))
    .filter((k) => !STACK_KEYS.includes(k))
    .sort();
  const deployment: Record<string, unknown> = {};
  for (const key of DEPLOYMENT_KEYS) {
    // Plain strings are not JSON; every other key is structured (objects, lists, booleans).
    const value = key === 'prefix' ? sluice.get(key) : sluice.getObject<unknown>(key);
    if (value !== undefined) deployment[key] = value;
  }
  return {
    project: gcp.get('project'),
    region: gcp.get('region'),
    pipeline: sluice.getObject<unknown>('pipeline'),
    deployment,
    unknownKeys,
  };
}
