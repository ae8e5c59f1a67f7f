/**
 * The key stream dead letters are sealed with (ADR-2305): a Secret Manager secret whose one version is 32
 * random bytes, read by the reader (which seals) and the backfill function (which checks before replaying).
 */
import { randomBytes } from 'node:crypto';
import * as gcp from '@pulumi/gcp';
import * as pulumi from '@pulumi/pulumi';
import type { InfraSettings } from '../settings';

/** The secret and its version. */
export interface DeadLetterKey {
  secret: gcp.secretmanager.Secret;
  version: gcp.secretmanager.SecretVersion;
}

/**
 * Creates the secret and its first version. The value is generated on the first `pulumi up` and kept in the
 * stack's state as a Pulumi secret; later runs generate another but `ignoreChanges` keeps the stored one, so
 * letters sealed before stay trusted. The functions read this version, pinned (docs/deploy.md, "Security model").
 */
export function createDeadLetterKey(s: InfraSettings): DeadLetterKey {
  const secret = new gcp.secretmanager.Secret('dead-letter-key', {
    project: s.project,
    secretId: s.names.deadLetterKey,
    replication: { auto: {} },
    labels: { app: 'sluice', role: 'dead-letter-key' },
  });
  const version = new gcp.secretmanager.SecretVersion(
    'dead-letter-key-v1',
    { secret: secret.id, secretData: pulumi.secret(randomBytes(32).toString('base64')) },
    { ignoreChanges: ['secretData'] },
  );
  return { secret, version };
}
