/**
 * The pipeline's progress read straight from the ledger in the Cloud Storage emulator: the manifest's
 * epoch, every partition entry of that epoch, their states and the watermark (the same pure functions the
 * scheduler uses). Independent of the functions, so catch-up can be judged even when one of them is down.
 */
import { parseEntry, parseManifest, watermark } from '../shared/domain/ledger';
import type { PartitionState } from '../shared/domain/ledger/entry';
import type { Timestamp } from '../shared/domain/timestamp';

/** Read access to one bucket (the GCS emulator's admin handle fits). */
export interface LedgerReader {
  objects(bucket: string): Array<Record<string, unknown>>;
  read(bucket: string, name: string): Buffer | undefined;
}

/** What the live view and the catch-up wait need. */
export interface PipelineProgress {
  /** null before the scheduler created the manifest. */
  epoch: number | null;
  /** The manifest's state (`starting`, `running`, `stopped`); null before it exists. */
  state: string | null;
  /** Why the pipeline is stopped (the full text, every line of it); null otherwise. */
  reason: string | null;
  /** Minimum position over unfinished partitions; null when there is none. */
  watermark: Timestamp | null;
  partitions: Record<PartitionState, number>;
  /** Last error recorded on any entry (`lastError.message`), most recent first, at most 5. */
  errors: string[];
}

/**
 * The scheduler's last status object when it says `stopped`: a configuration the database cannot serve
 * stops the pipeline in the status only, the manifest is left alone (ADR-1507).
 */
function stoppedStatus(ledger: LedgerReader, bucket: string, pipeline: string): string | null {
  const text = ledger.read(bucket, `${pipeline}/status.json`);
  if (!text) return null;
  try {
    const status = JSON.parse(text.toString('utf8')) as { state?: unknown; reason?: unknown };
    return status.state === 'stopped' ? String(status.reason ?? 'no reason recorded') : null;
  } catch {
    return null;
  }
}

/** Reads the ledger of `pipeline` from `bucket`. */
export function readProgress(ledger: LedgerReader, bucket: string, pipeline: string): PipelineProgress {
  const partitions: Record<PartitionState, number> = {
    waiting: 0,
    ready: 0,
    leased: 0,
    finished: 0,
    failed: 0,
  };
  const manifestText = ledger.read(bucket, `${pipeline}/manifest.json`);
  if (!manifestText) {
    const stopped = stoppedStatus(ledger, bucket, pipeline);
    const state = stopped === null ? null : 'stopped';
    return { epoch: null, state, reason: stopped, watermark: null, partitions, errors: [] };
  }
  const manifest = parseManifest(manifestText.toString('utf8'));
  const { epoch } = manifest;
  const stopped = stoppedStatus(ledger, bucket, pipeline);
  const state = stopped === null ? manifest.state : 'stopped';
  const reason = stopped ?? manifest.reason;
  const prefix = `${pipeline}/partitions/e${epoch}/`;
  const entries = ledger
    .objects(bucket)
    .map((o) => String(o.name))
    .filter((name) => name.startsWith(prefix))
    .flatMap((name) => {
      const text = ledger.read(bucket, name);
      return text ? [parseEntry(text.toString('utf8'), name)] : [];
    });
  const errors: Array<{ at: bigint; message: string }> = [];
  for (const e of entries) {
    partitions[e.state]++;
    if (e.lastError) errors.push({ at: e.lastError.at, message: e.lastError.message });
  }
  errors.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return {
    epoch,
    state,
    reason,
    watermark: watermark(entries, epoch),
    partitions,
    errors: errors.slice(0, 5).map((e) => e.message),
  };
}
