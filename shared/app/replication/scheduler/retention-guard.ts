/**
 * The scheduler's retention guard: warn within the margin of the change stream's retention, and on expiry stop
 * the pipeline (`fail`) or start a new epoch (`restart`, `restart-and-backfill`), logging the interval whose
 * changes are lost.
 */
import { SluiceError } from '../../../domain/errors';
import type { Manifest } from '../../../domain/ledger';
import { addNanos, diffMillis, formatTimestamp, type Timestamp } from '../../../domain/timestamp';
import type { AppSettings, Runtime } from '../../common';
import type { PipelineStatus } from '../../ledger';
import { newWriterToken, type Versioned } from '../../ledger';
import { retentionBackfillId, type StartArgs, snapshotHandOver, startPipeline } from './pipeline-start';
import type { ValidatedStream } from './stream-validation';

/** What the guard needs: the ledger and start arguments (as the scheduler builds them), settings and clock. */
export interface RetentionContext {
  startArgs: StartArgs;
  settings: AppSettings;
  runtime: Runtime;
}

/** What the guard found; `manifest` is the manifest it wrote, when it stopped or restarted the pipeline. */
export interface RetentionOutcome {
  info: PipelineStatus['retention'];
  stopped?: boolean;
  restarted?: boolean;
  manifest?: Versioned<Manifest>;
}

/**
 * Warns within the margin of the stream's retention; on expiry stops the pipeline (`fail`) or starts a new
 * epoch at now (`restart`, `restart-and-backfill`), logging the interval whose changes are lost.
 */
export async function guardRetention(
  ctx: RetentionContext,
  manifest: Versioned<Manifest>,
  watermark: Timestamp | null,
  stream: ValidatedStream,
  now: Timestamp,
): Promise<RetentionOutcome> {
  const retentionMs = stream.options.retentionSeconds * 1000;
  const marginMs = ctx.settings.retentionMarginMs;
  const ageMs = watermark === null ? 0 : diffMillis(now, watermark);
  const danger = ageMs >= retentionMs - marginMs;
  const info = { seconds: stream.options.retentionSeconds, marginSeconds: marginMs / 1000, danger };
  if (watermark === null || manifest.value.state !== 'running' || !danger) return { info };
  const log = ctx.runtime.log;
  if (ageMs < retentionMs) {
    log.warn('retention.danger', {
      watermark: formatTimestamp(watermark),
      ageSeconds: ageMs / 1000,
      retentionSeconds: stream.options.retentionSeconds,
    });
    return { info };
  }
  const lost = { from: formatTimestamp(addNanos(watermark, 1n)), to: formatTimestamp(now) };
  if (ctx.settings.config.retentionFallback === 'fail') {
    return { info, ...(await stopExpired(ctx, manifest, watermark, stream, lost)) };
  }
  const fallback = ctx.settings.config.retentionFallback;
  log.error(
    'retention.restart',
    new SluiceError('permanent', 'positions expired; restarting the ledger at now'),
    { lost, fallback },
  );
  // restart-and-backfill: the replicas are reloaded at T and the stream resumes at T + 1 ns (see ADR-702).
  const restartAt =
    fallback === 'restart-and-backfill'
      ? await snapshotHandOver(
          ctx.startArgs,
          retentionBackfillId(manifest.value.epoch + 1),
          'retention-fallback',
        )
      : now;
  const restarted = await startPipeline(ctx.startArgs, manifest, restartAt);
  return { info, restarted: true, ...(restarted ? { manifest: restarted } : {}) };
}

/** `SLUICE_RETENTION_FALLBACK=fail`: stops the pipeline with a reason naming what is lost and the fixes. */
async function stopExpired(
  ctx: RetentionContext,
  manifest: Versioned<Manifest>,
  watermark: Timestamp,
  stream: ValidatedStream,
  lost: { from: string; to: string },
): Promise<Omit<RetentionOutcome, 'info'>> {
  const reason = `the watermark ${formatTimestamp(watermark)} is older than the stream's retention of ${stream.options.retentionSeconds} s: changes after it can no longer be read. Set SLUICE_RETENTION_FALLBACK=restart to restart at now (losing ${lost.from}..${lost.to}), or backfill and restart`;
  const stopped: Manifest = {
    ...manifest.value,
    state: 'stopped',
    reason,
    writer: newWriterToken('scheduler'),
  };
  const generation = await ctx.startArgs.ledger.writeManifest(stopped, manifest.generation);
  ctx.runtime.log.error('pipeline.failed', new SluiceError('permanent', reason), { lost });
  return { stopped: true, ...(generation ? { manifest: { value: stopped, generation } } : {}) };
}
