/**
 * `npx sluice check-config infra/Pulumi.<stack>.yaml`: the stack file checked by the same pure function the
 * Pulumi program builds its settings with (`buildSettings`, infra/settings.ts), without the Pulumi CLI:
 * every problem printed with its config key, exit 1; a valid file gets a summary and exit 0.
 */
import { readFileSync } from 'node:fs';
import { StackConfigError } from '../infra/config-error';
import { DEPLOYMENT_KEYS, STACK_KEYS } from '../infra/deployment-schema';
import { buildSettings, type InfraSettings, type StackConfigInput } from '../infra/settings';

/** The Pulumi project's name (infra/Pulumi.yaml): a config key without a namespace belongs to it. */
const PROJECT = 'sluice';

/**
 * The raw stack configuration of a stack file's `config:` map, as `readStackConfig` reads it from Pulumi
 * (infra/stack-config.ts): `gcp:project`, `gcp:region`, `sluice:pipeline`, the deployment keys, and the names
 * of every other `sluice:*` key.
 */
export function stackInput(config: Record<string, unknown>): StackConfigInput {
  const sluice = new Map<string, unknown>();
  for (const [key, value] of Object.entries(config)) {
    const full = key.includes(':') ? key : `${PROJECT}:${key}`;
    if (full.startsWith(`${PROJECT}:`)) sluice.set(full.slice(PROJECT.length + 1), value);
  }
  const deployment: Record<string, unknown> = {};
  for (const key of DEPLOYMENT_KEYS) if (sluice.get(key) !== undefined) deployment[key] = sluice.get(key);
  return {
    project: config['gcp:project'],
    region: config['gcp:region'],
    pipeline: sluice.get('pipeline'),
    deployment,
    unknownKeys: [...sluice.keys()].filter((k) => !STACK_KEYS.includes(k)).sort(),
  };
}

/** The `config:` map of a stack file's text. @throws naming the file when it is not such a file. */
function readConfig(path: string, text: string): Record<string, unknown> {
  const { load } = require('js-yaml') as { load(text: string): unknown };
  let doc: unknown;
  try {
    doc = load(text);
  } catch (err) {
    throw new Error(`${path}: not YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const config = (doc as { config?: unknown } | null)?.config;
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    throw new Error(`${path}: no config: map (a Pulumi stack file has one)`);
  return config as Record<string, unknown>;
}

function summary(path: string, s: InfraSettings): string[] {
  return [
    `${path}: valid`,
    `  project ${s.project}, region ${s.region}, prefix ${s.prefix}`,
    `  spanner ${s.spanner.instance}/${s.spanner.database}, stream ${s.spanner.stream}; dataset ${s.dataset.id}`,
    `  ledger bucket ${s.names.ledgerBucket}; lineage ${s.lineage.target}; data boost ${s.dataBoost ? 'on' : 'off'}`,
    `  functions ${Object.entries(s.functions)
      .map(([name, f]) => `${name} (${f.memory}, up to ${f.maxInstances})`)
      .join(', ')}`,
  ];
}

/** Runs the check; resolves the exit code (0 valid, 1 problems, 2 the file cannot be read). */
export function checkConfig(path: string, out: (line: string) => void): number {
  let config: Record<string, unknown>;
  try {
    config = readConfig(path, readFileSync(path, 'utf8'));
  } catch (err) {
    out(`error: ${(err as Error).message}`);
    return 2;
  }
  try {
    for (const line of summary(path, buildSettings(stackInput(config)))) out(line);
    return 0;
  } catch (err) {
    if (!(err instanceof StackConfigError)) throw err;
    out(`${path}: ${err.issues.length} problem${err.issues.length === 1 ? '' : 's'}`);
    for (const i of err.issues) out(`  ${i.path}: ${i.message}`);
    return 1;
  }
}
