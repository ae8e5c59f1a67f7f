/**
 * Bucket metadata: what a client may set at creation and change with PATCH (JSON merge semantics: nested
 * objects merge, `null` removes a field or a label), and the `storage#bucket` resource built from it.
 */
import { invalid } from './errors';

/** Fields the service computes; a client cannot set them. */
const READ_ONLY = new Set([
  'kind',
  'id',
  'name',
  'selfLink',
  'projectNumber',
  'metageneration',
  'etag',
  'timeCreated',
  'updated',
]);

/** A bucket's client-settable configuration (labels, storageClass, versioning, lifecycle, …), as JSON. */
export type BucketConfig = Record<string, unknown>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** RFC 7396 merge: objects merge key by key, `null` deletes, anything else replaces. */
export function mergePatch(base: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(base) ? { ...base } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The settable part of a bucket body (insert, PATCH or PUT), validated. */
export function configOf(body: unknown): BucketConfig {
  if (body === undefined) return {};
  if (!isObject(body)) throw invalid('Bucket metadata must be a JSON object.');
  const out: BucketConfig = {};
  for (const [k, v] of Object.entries(body)) if (!READ_ONLY.has(k)) out[k] = v;
  if (typeof out['storageClass'] === 'string')
    out['storageClass'] = (out['storageClass'] as string).toUpperCase().replace(/-/g, '_');
  const labels = out['labels'];
  if (labels !== undefined && labels !== null && !isObject(labels)) throw invalid('labels must be an object');
  if (isObject(labels) && Object.keys(labels).length > 64)
    throw invalid('A bucket may have at most 64 labels.');
  return out;
}

/** A configuration change at `nowIso`: autoclass gets its toggle time, as the service sets it. */
export function applyConfig(
  current: BucketConfig,
  change: BucketConfig,
  replace: boolean,
  nowIso: string,
): BucketConfig {
  const next = (replace ? change : mergePatch(current, change)) as BucketConfig;
  // A bucket whose last label is removed has no `labels` field at all.
  if (isObject(next['labels']) && Object.keys(next['labels']).length === 0) delete next['labels'];
  const auto = next['autoclass'];
  const before = (current['autoclass'] as { enabled?: boolean } | undefined)?.enabled;
  if (isObject(auto) && (auto['enabled'] !== before || auto['toggleTime'] === undefined)) {
    // Toggle times only move forward, even for two toggles within one millisecond.
    const prev = (current['autoclass'] as { toggleTime?: string } | undefined)?.toggleTime;
    const at = prev && nowIso <= prev ? new Date(Date.parse(prev) + 1).toISOString() : nowIso;
    next['autoclass'] = { ...auto, toggleTime: at };
  }
  return next;
}

/** The defaults the service reports for fields a client never set. */
export function bucketDefaults(config: BucketConfig): BucketConfig {
  const location =
    typeof config['location'] === 'string' ? (config['location'] as string).toUpperCase() : 'US';
  const dual = location.includes('+') || ['EUR4', 'NAM4', 'ASIA1'].includes(location);
  const multi = ['US', 'EU', 'ASIA'].includes(location);
  return {
    location,
    locationType: dual ? 'dual-region' : multi ? 'multi-region' : 'region',
    storageClass: 'STANDARD',
    iamConfiguration: {
      bucketPolicyOnly: { enabled: false },
      uniformBucketLevelAccess: { enabled: false },
      publicAccessPrevention: 'inherited',
    },
    rpo: dual ? 'DEFAULT' : undefined,
  };
}
