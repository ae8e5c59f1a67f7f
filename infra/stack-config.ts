/** Reads the raw stack configuration from Pulumi config; validation happens in `settings.ts`. */
import * as pulumi from '@pulumi/pulumi';
import type { StackConfigInput } from './settings';

/** Every `sluice:*` key besides `pipeline` (see `deployment-schema.ts`). */
export const DEPLOYMENT_KEYS = [
  'prefix',
  'functions',
  'queues',
  'schedule',
  'alerts',
  'dataBoost',
  'demoDatabase',
  'operators',
  'ledger',
  'dataset',
] as const;

/** Reads `gcp:project`, `gcp:region`, `sluice:pipeline` and the deployment keys, absent keys left out. */
export function readStackConfig(): StackConfigInput {
  const gcp = new pulumi.Config('gcp');
  const sluice = new pulumi.Config('sluice');
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
  };
}
