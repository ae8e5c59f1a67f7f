/** The CreateWriteStream quota of the emulator: creations per project in a sliding window. */
/**
 * The CreateWriteStream quota: at most `limit` creations per project in any `windowMs` (BigQuery documents
 * 10,000 per hour per project and region).
 */
export interface CreateStreamQuota {
  limit: number;
  windowMs: number;
}

/** The service's quota, as documented. */
export const DEFAULT_CREATE_STREAM_QUOTA: CreateStreamQuota = { limit: 10_000, windowMs: 3_600_000 };

/** A quota from `<limit>[/<window ms>]` (window default one hour); throws naming the bad part. */
export function parseCreateStreamQuota(text: string): CreateStreamQuota {
  const m = /^(\d+)(?:\/(\d+))?$/.exec(text.trim());
  if (!m || Number(m[2] ?? 1) === 0) {
    throw new Error(
      `create-stream quota ${JSON.stringify(text)}: expected <limit>[/<window ms>], e.g. 10000/3600000`,
    );
  }
  return { limit: Number(m[1]), windowMs: m[2] ? Number(m[2]) : DEFAULT_CREATE_STREAM_QUOTA.windowMs };
}

/** Counts stream creations per project; refuses one once the window's limit is spent. */
export class CreationQuota {
  /** Creation times (ms) per project within the window, oldest first. */
  private created = new Map<string, number[]>();
  /** Explicit streams ever created, for inspection. */
  total = 0;

  constructor(public limits: CreateStreamQuota) {}

  /** Counts one creation by `project`; returns the refusal (the service's RESOURCE_EXHAUSTED text) when spent. */
  charge(project: string, entity: string): string | undefined {
    const now = Date.now();
    const { limit, windowMs } = this.limits;
    const times = (this.created.get(project) ?? []).filter((t) => t > now - windowMs);
    this.created.set(project, times);
    if (times.length >= limit) {
      return `Exceeds quota limit 'CreateWriteStream requests' (${limit} per ${windowMs} ms) for project ${project}. Entity: ${entity}`;
    }
    times.push(now);
    this.total++;
    return undefined;
  }
}
