/** The source archive upload and the four Cloud Run functions (gen2) built from it. */
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import { FUNCTION_NAMES, type FunctionName } from '../deployment-schema';
import type { InfraSettings } from '../settings';
import { type ArchiveEntry, archiveHash } from '../source-archive';
import type { Accounts } from './accounts';
import type { DeadLetterKey } from './secrets';

/** The deployed functions and their source object. */
export interface Functions {
  source: gcp.storage.BucketObject;
  byName: Record<FunctionName, gcp.cloudfunctionsv2.Function>;
}

/** Production runtime; the code also runs on Node 20, which the development machines use. */
export const RUNTIME = 'nodejs22';

/**
 * What a deployed instance with an invalid configuration does: exit before it listens (ADR-2004). The
 * Cloud Functions API has no startup-probe setting, but Cloud Run gives every revision a TCP startup probe,
 * and a container that never listens fails it: the revision is not ready, the deployment fails, and the
 * revision that served before keeps the traffic.
 */
export const DEPLOYED_ON_INVALID_CONFIG = { SLUICE_ON_INVALID_CONFIG: 'exit' } as const;

/**
 * Cloud Run URL of a function's service: `https://<service>-<project number>.<region>.run.app`. It is
 * computed rather than read from the function, because the reader chains windows to itself and the
 * backfill function enqueues partitions to itself: a function cannot take its own URL output as input.
 */
export function runUrl(service: string, projectNumber: string, region: string): string {
  return `https://${service}-${projectNumber}.${region}.run.app`;
}

/**
 * The environment one deployed function gets: the pipeline configuration, where the deployment put things,
 * the function URLs (from the project number), the writer's own variables (the writer only: the others
 * would warn about unknown ones), the invalid-configuration policy and which function it is.
 */
export function functionEnvironment(
  s: InfraSettings,
  name: FunctionName,
  projectNumber: string,
): Record<string, string> {
  return {
    ...s.environment,
    SLUICE_READER_URL: runUrl(s.names.functions.reader, projectNumber, s.region),
    SLUICE_BACKFILL_URL: runUrl(s.names.functions.backfill, projectNumber, s.region),
    ...(name === 'writer' ? s.writer.environment : {}),
    ...DEPLOYED_ON_INVALID_CONFIG,
    SLUICE_FUNCTION: name,
  };
}

/** Uploads the archive and creates the functions, each with its own service account. */
export function createFunctions(
  s: InfraSettings,
  sourceBucket: gcp.storage.Bucket,
  entries: readonly ArchiveEntry[],
  accounts: Accounts,
  key: { key: DeadLetterKey; grants: pulumi.Resource[] },
): Functions {
  const source = new gcp.storage.BucketObject('function-source', {
    bucket: sourceBucket.name,
    // The content hash in the name makes any code change a new object, hence a new build and revision.
    name: `functions-${archiveHash(entries)}.zip`,
    source: new pulumi.asset.AssetArchive(
      Object.fromEntries(
        entries.map((e) => [e.path, new pulumi.asset.StringAsset(e.content.toString('utf8'))]),
      ),
    ),
  });
  const projectNumber = gcp.organizations.getProjectOutput({ projectId: s.project }).number;
  const byName = Object.fromEntries(
    FUNCTION_NAMES.map((name) => [
      name,
      fn(s, name, { bucket: sourceBucket, source }, accounts, projectNumber, key),
    ]),
  ) as Record<FunctionName, gcp.cloudfunctionsv2.Function>;
  return { source, byName };
}

/** Only the reader (which seals letters) and the backfill function (which checks them) get the key. */
const HOLDS_KEY: readonly FunctionName[] = ['reader', 'backfill'];

function fn(
  s: InfraSettings,
  name: FunctionName,
  { bucket, source }: { bucket: gcp.storage.Bucket; source: gcp.storage.BucketObject },
  accounts: Accounts,
  projectNumber: pulumi.Output<string>,
  key: { key: DeadLetterKey; grants: pulumi.Resource[] },
): gcp.cloudfunctionsv2.Function {
  const size = s.functions[name];
  const holds = HOLDS_KEY.includes(name);
  const secret = {
    key: 'SLUICE_DEAD_LETTER_KEY',
    projectId: s.project,
    secret: key.key.secret.secretId,
    version: key.key.version.version,
  };
  return new gcp.cloudfunctionsv2.Function(
    name,
    {
      name: s.names.functions[name],
      project: s.project,
      location: s.region,
      description: `sluice ${name}`,
      buildConfig: {
        runtime: RUNTIME,
        entryPoint: name,
        source: { storageSource: { bucket: bucket.name, object: source.name } },
      },
      serviceConfig: {
        availableMemory: size.memory,
        availableCpu: String(size.cpu),
        timeoutSeconds: size.timeoutSeconds,
        minInstanceCount: size.minInstances,
        maxInstanceCount: size.maxInstances,
        maxInstanceRequestConcurrency: size.concurrency,
        ingressSettings: size.ingress,
        serviceAccountEmail: accounts.runtime[name].email,
        allTrafficOnLatestRevision: true,
        environmentVariables: projectNumber.apply((n) => functionEnvironment(s, name, n)),
        ...(holds ? { secretEnvironmentVariables: [secret] } : {}),
      },
      labels: { app: 'sluice', function: name },
    },
    holds ? { dependsOn: key.grants } : {},
  );
}
