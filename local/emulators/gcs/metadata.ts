/**
 * Parses the JSON metadata clients send on upload, patch and update. `null` in a patch clears a field (and
 * `metadata: {key: null}` removes one custom key), as in the JSON API.
 */
import { z } from 'zod';
import { invalid } from './errors';
import type { WritableMetadata } from './objects';

const text = z.string().nullish();
const custom = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]).nullable()).nullish();

const schema = z
  .object({
    name: z.string().optional(),
    contentType: text,
    contentEncoding: text,
    contentDisposition: text,
    contentLanguage: text,
    cacheControl: text,
    customTime: z.iso.datetime({ offset: true }).nullish(),
    metadata: custom,
    /** Hashes a client sends with an upload, checked against the data (base64). */
    crc32c: z.string().optional(),
    md5Hash: z.string().optional(),
  })
  .loose();

/** A metadata change: `undefined` leaves a field alone, `null` clears it. */
export type MetadataPatch = z.infer<typeof schema>;

/** Parses a client's metadata body (upload part, PATCH or PUT body). */
export function parseMetadata(body: unknown): MetadataPatch {
  const parsed = schema.safeParse(body ?? {});
  if (!parsed.success) throw invalid(`Invalid object metadata: ${parsed.error.message}`);
  return parsed.data;
}

const FIELDS = [
  'contentType',
  'contentEncoding',
  'contentDisposition',
  'contentLanguage',
  'cacheControl',
  'customTime',
] as const;

/** Applies a patch to `base` (PATCH semantics); `replace` starts from nothing (PUT/update semantics). */
export function applyPatch(base: WritableMetadata, patch: MetadataPatch, replace = false): WritableMetadata {
  const out: WritableMetadata = replace ? {} : { ...base, metadata: { ...(base.metadata ?? {}) } };
  for (const field of FIELDS) {
    const value = patch[field];
    if (value === null) delete out[field];
    else if (value !== undefined) out[field] = value;
  }
  if (patch.metadata === null) out.metadata = {};
  else if (patch.metadata) {
    const merged: Record<string, string> = { ...(out.metadata ?? {}) };
    for (const [key, value] of Object.entries(patch.metadata)) {
      if (value === null) delete merged[key];
      else merged[key] = String(value);
    }
    out.metadata = merged;
  }
  checkCustomMetadata(out.metadata);
  return out;
}

/** The service's custom-metadata limits: 1 KiB per key, 4 KiB per value, 8 KiB in all (UTF-8 bytes). */
export function checkCustomMetadata(metadata: Record<string, string> | undefined): void {
  let total = 0;
  for (const [key, value] of Object.entries(metadata ?? {})) {
    const [k, v] = [Buffer.byteLength(key), Buffer.byteLength(value)];
    if (k > 1024)
      throw invalid(
        `Custom metadata key ${JSON.stringify(key.slice(0, 40))}… is ${k} bytes; the limit is 1024.`,
      );
    if (v > 4096)
      throw invalid(`Custom metadata value of ${JSON.stringify(key)} is ${v} bytes; the limit is 4096.`);
    total += k + v;
  }
  if (total > 8192)
    throw invalid(`Custom metadata is ${total} bytes in all (keys and values); the limit is 8192.`);
}
