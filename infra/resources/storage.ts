/** The ledger bucket (the pipeline's only state) and the bucket holding the function source archive. */
import * as gcp from '@pulumi/gcp';
import type { InfraSettings } from '../settings';

/** Both buckets. */
export interface Buckets {
  ledger: gcp.storage.Bucket;
  source: gcp.storage.Bucket;
}

/**
 * Ledger: uniform access and public access prevention (no ACLs, never public). Versioning keeps the
 * previous generations of ledger objects for repair; since a busy partition is rewritten up to once a
 * second, noncurrent versions are deleted after a few days instead of piling up (soft delete is off by
 * default for the same reason: it would retain every overwrite for at least 7 days). Backfill jobs set the
 * object's custom time when they finish, so finished jobs, and only those, expire by age.
 */
export function createBuckets(s: InfraSettings): Buckets {
  const ledger = new gcp.storage.Bucket('ledger', {
    name: s.names.ledgerBucket,
    project: s.project,
    location: s.ledger.location,
    storageClass: 'STANDARD',
    uniformBucketLevelAccess: true,
    publicAccessPrevention: 'enforced',
    versioning: { enabled: true },
    softDeletePolicy: { retentionDurationSeconds: s.ledger.softDeleteDays * 86_400 },
    forceDestroy: s.ledger.forceDestroy,
    lifecycleRules: [
      {
        action: { type: 'Delete' },
        condition: { daysSinceNoncurrentTime: s.ledger.noncurrentDays, withState: 'ARCHIVED' },
      },
      {
        action: { type: 'Delete' },
        condition: { daysSinceCustomTime: s.ledger.finishedJobsAgeDays, withState: 'LIVE' },
      },
    ],
    labels: { app: 'sluice', role: 'ledger' },
  });
  // Source archives are named by content hash and a few MB each; they stay, because a function whose
  // archive is gone cannot be rebuilt by the platform (e.g. on a runtime security update).
  const source = new gcp.storage.Bucket('source', {
    name: s.names.sourceBucket,
    project: s.project,
    location: s.region,
    uniformBucketLevelAccess: true,
    publicAccessPrevention: 'enforced',
    forceDestroy: true,
    labels: { app: 'sluice', role: 'source' },
  });
  return { ledger, source };
}
