/**
 * The pipeline manifest and the object layout of the ledger under `<pipeline>/` in the bucket.
 */
import { z } from 'zod';
import type { Timestamp } from '../timestamp';
import { timestampString } from '../zod-helpers';
import { ledgerReplacer, parseLedgerJson } from './codec';

/** Version of the manifest format. */
export const MANIFEST_FORMAT = 1;

import type { Dialect } from '../change-record';

export type { Dialect };

/**
 * - `starting`: created; the initial partitions are being recorded.
 * - `running`: partitions are read.
 * - `stopped`: an operator or a failure (e.g. an expired position with fallback `fail`) stopped it.
 */
export type PipelineState = 'starting' | 'running' | 'stopped';

/** One object per pipeline: what is replicated and which generation of partition entries is current. */
export interface Manifest {
  format: typeof MANIFEST_FORMAT;
  pipeline: string;
  stream: string;
  dialect: Dialect;
  /** The start timestamp of the current epoch (the initial change-stream query's start). */
  start: Timestamp;
  /** Incremented when the ledger restarts (retention fallback); entries of older epochs are stale. */
  epoch: number;
  state: PipelineState;
  /** Why it is stopped, for the operator. */
  reason: string | null;
  writer: string;
}

const manifestSchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  pipeline: z.string().min(1),
  stream: z.string().min(1),
  dialect: z.enum(['GOOGLE_STANDARD_SQL', 'POSTGRESQL']),
  start: timestampString,
  epoch: z.number().int().min(0),
  state: z.enum(['starting', 'running', 'stopped']),
  reason: z.string().nullable(),
  writer: z.string().min(1),
});

/** Serialises a manifest (fixed key order). */
export function serializeManifest(m: Manifest): string {
  const ordered: Record<string, unknown> = {};
  for (const key of Object.keys(manifestSchema.shape)) ordered[key] = m[key as keyof Manifest];
  return JSON.stringify(ordered, ledgerReplacer);
}

/** Parses a manifest. @throws SluiceError (`permanent`) naming every problem. */
export function parseManifest(text: string, what = 'pipeline manifest'): Manifest {
  return parseLedgerJson(text, manifestSchema, what) as Manifest;
}

/** A new epoch starting at `start` (first start, or a restart after the positions expired). */
export function nextEpoch(m: Manifest, start: Timestamp, writer: string): Manifest {
  return { ...m, epoch: m.epoch + 1, start, state: 'starting', reason: null, writer };
}

/** Object names of one pipeline's ledger. Pipeline names are validated by the configuration. */
export function ledgerPaths(pipeline: string) {
  const root = `${pipeline}/`;
  return {
    /** The pipeline manifest. */
    manifest: `${root}manifest.json`,
    /** Status written by the scheduler each tick (watermark, lag, counts). */
    status: `${root}status.json`,
    /** Prefix of all partition entries (every epoch). */
    partitionsPrefix: `${root}partitions/`,
    /** Prefix to list the partitions of one epoch. */
    epochPrefix: (epoch: number) => `${root}partitions/e${epoch}/`,
    /** One partition entry. */
    partition: (epoch: number, id: string) => `${root}partitions/e${epoch}/${id}.json`,
    /** One backfill job. */
    backfill: (jobId: string) => `${root}backfills/${jobId}.json`,
    /** Marker that the pipeline ensured a BigQuery table (ADR-1515): written once, never changed. */
    ensured: (kind: 'replica' | 'history', destination: string) =>
      `${root}ensured/${kind}/${encodeURIComponent(destination)}`,
  };
}

/** The partition id in an entry's object name, or `null` if the name is not a partition entry. */
export function partitionIdFromName(name: string): { epoch: number; id: string } | null {
  const m = /\/partitions\/e(\d+)\/([0-9a-f]{32})\.json$/.exec(name);
  return m ? { epoch: Number(m[1]), id: m[2]! } : null;
}
