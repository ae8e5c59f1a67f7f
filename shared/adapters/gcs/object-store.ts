/**
 * {@link ObjectStore} on Cloud Storage. Conditional writes use `ifGenerationMatch` (0 = create-only); the
 * client retries them on 429/5xx by itself (its RetryConditional strategy), so a 412 may be our own earlier
 * attempt: the writer token decides.
 */
import type { Bucket, File } from '@google-cloud/storage';
import {
  type ObjectInfo,
  type ObjectPage,
  type ObjectStore,
  type StoredObject,
  WRITER_TOKEN_KEY,
  type WriteOptions,
  type WriteOutcome,
} from '../../ports/object-store';

interface GcsMetadata {
  name?: string;
  generation?: string | number;
  updated?: string;
  customTime?: string;
  metadata?: Record<string, string | number | boolean | null>;
}

function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function infoOf(meta: GcsMetadata): ObjectInfo {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta.metadata ?? {}))
    if (v !== null && v !== undefined) metadata[k] = String(v);
  return {
    name: String(meta.name),
    generation: String(meta.generation),
    metadata,
    updated: String(meta.updated ?? ''),
    ...(meta.customTime ? { customTime: meta.customTime } : {}),
  };
}

/** Cloud Storage implementation of the ledger's object store. */
export class GcsObjectStore implements ObjectStore {
  constructor(private readonly bucket: Bucket) {}

  async read(name: string): Promise<StoredObject | undefined> {
    // Metadata first, then exactly that generation, so content and generation always belong together.
    for (let attempt = 0; attempt < 3; attempt++) {
      const meta = await this.metadata(this.bucket.file(name));
      if (!meta) return undefined;
      try {
        const [data] = await this.bucket.file(name, { generation: Number(meta.generation) }).download();
        return { ...infoOf(meta), data };
      } catch (err) {
        if (statusOf(err) !== 404) throw err; // replaced between the two calls: read again
      }
    }
    throw new Error(`object ${name} kept changing while being read`);
  }

  async write(name: string, data: Buffer, options: WriteOptions): Promise<WriteOutcome> {
    const file = this.bucket.file(name);
    const metadata = {
      ...(options.metadata ?? {}),
      ...(options.writerToken ? { [WRITER_TOKEN_KEY]: options.writerToken } : {}),
    };
    try {
      await file.save(data, {
        resumable: false,
        contentType: options.contentType ?? 'application/json',
        metadata: { metadata, ...(options.customTime ? { customTime: options.customTime } : {}) },
        preconditionOpts: { ifGenerationMatch: options.ifGeneration },
      });
      return { ok: true, generation: String((file.metadata as GcsMetadata).generation) };
    } catch (err) {
      if (statusOf(err) !== 412) throw err;
      if (options.writerToken) {
        const now = await this.metadata(file);
        if (now && infoOf(now).metadata[WRITER_TOKEN_KEY] === options.writerToken) {
          return { ok: true, generation: String(now.generation) };
        }
      }
      return { ok: false, reason: 'conflict' };
    }
  }

  async delete(name: string, ifGeneration: string): Promise<WriteOutcome> {
    try {
      await this.bucket.file(name).delete({ ifGenerationMatch: ifGeneration });
      return { ok: true, generation: ifGeneration };
    } catch (err) {
      const status = statusOf(err);
      if (status === 412 || status === 404) return { ok: false, reason: 'conflict' };
      throw err;
    }
  }

  async list(prefix: string, options: { pageToken?: string; maxResults?: number } = {}): Promise<ObjectPage> {
    const [files, next] = await this.bucket.getFiles({
      prefix,
      maxResults: Math.min(options.maxResults ?? 1000, 1000),
      pageToken: options.pageToken,
      autoPaginate: false,
    });
    const nextPageToken = (next as { pageToken?: string } | null)?.pageToken;
    return {
      items: files.map((f) => infoOf(f.metadata as GcsMetadata)),
      nextPageToken: nextPageToken || undefined,
    };
  }

  private async metadata(file: File): Promise<GcsMetadata | undefined> {
    try {
      const [meta] = await file.getMetadata();
      return meta as GcsMetadata;
    } catch (err) {
      if (statusOf(err) === 404) return undefined;
      throw err;
    }
  }
}
