/**
 * The stream-option check of every reader window and scheduler tick: when the stream starts hiding changes
 * the targets need (an `exclude_*` option or `allow_txn_exclusion` turned on, not accepted in
 * `SLUICE_ACCEPT_STREAM_OPTIONS`), the pipeline is stopped — manifest `state: "stopped"` with a `reason`
 * naming the option — rather than left to diverge. The next tick resumes it once the option is off again;
 * changes committed meanwhile were never recorded by the stream, so the reason and the resume log say to
 * backfill. Checks starting within a second of each other in one instance share one query.
 */
import type { PipelineConfig } from '../../../domain/config';
import { SluiceError } from '../../../domain/errors';
import type { Manifest } from '../../../domain/ledger';
import { streamOptionProblems } from '../../../domain/stream-options';
import type { SpannerCatalog } from '../../../ports/spanner-catalog';
import type { Runtime } from '../../common';
import { type LedgerStore, newWriterToken, type Versioned } from '../../ledger';

/** Every reason the guard writes starts with this, so a tick can tell its stops from others. */
export const STREAM_OPTIONS_STOP = 'change stream options hide changes';

const SHARE_MS = 1_000;

/** Checks the stream's options against the configuration; stops and resumes the pipeline. */
export class StreamGuard {
  private last: { at: number; problems: Promise<string[]> } | undefined;

  constructor(
    private readonly catalog: SpannerCatalog,
    private readonly ledger: LedgerStore,
    private readonly config: PipelineConfig,
    private readonly runtime: Runtime,
  ) {}

  /** The problems of the stream's current options (empty: nothing hidden that is not accepted). */
  problems(): Promise<string[]> {
    const now = Date.now();
    if (this.last && now - this.last.at < SHARE_MS) return this.last.problems;
    const problems = this.read();
    this.last = { at: now, problems };
    problems.catch(() => {
      if (this.last?.problems === problems) this.last = undefined;
    });
    return problems;
  }

  private async read(): Promise<string[]> {
    const { stream } = this.config.spanner;
    const [options, dialect] = await Promise.all([
      this.catalog.streamOptions(stream),
      this.catalog.dialect(),
    ]);
    return streamOptionProblems(options.raw, this.config.acceptStreamOptions, stream, dialect);
  }

  /** Before a pipeline starts: @throws SluiceError (`permanent`) naming each option that hides changes. */
  async refuseHiding(): Promise<void> {
    const problems = await this.problems();
    if (problems.length === 0) return;
    throw new SluiceError(
      'permanent',
      `change stream ${this.config.spanner.stream} cannot be replicated:\n  - ${problems.join('\n  - ')}`,
    );
  }

  /**
   * In a window: when the options hide changes, stops a running pipeline (compare-and-swap; a lost race
   * means someone else changed the manifest, who decides) and returns the reason; undefined when fine.
   */
  async stopIfHiding(manifest: Versioned<Manifest>): Promise<string | undefined> {
    const problems = await this.problems();
    if (problems.length === 0) return undefined;
    const reason = `${STREAM_OPTIONS_STOP}: ${problems.join('; ')}. Changes committed while an option was on are not in the stream: backfill the replica tables once it is off again (the next tick then resumes)`;
    if (manifest.value.state !== 'running') return reason;
    const stopped: Manifest = {
      ...manifest.value,
      state: 'stopped',
      reason,
      writer: newWriterToken('reader'),
    };
    const generation = await this.ledger.writeManifest(stopped, manifest.generation);
    if (generation)
      this.runtime.log.error('pipeline.stopped', new SluiceError('permanent', reason), { problems });
    return reason;
  }

  /**
   * In a tick: resumes a pipeline this guard stopped once its options no longer hide changes. Returns the
   * manifest to go on with (the same one when nothing changed).
   */
  async resumeIfFixed(manifest: Versioned<Manifest>): Promise<Versioned<Manifest>> {
    const m = manifest.value;
    if (m.state !== 'stopped' || !m.reason?.startsWith(STREAM_OPTIONS_STOP)) return manifest;
    if ((await this.problems()).length > 0) return manifest;
    const resumed: Manifest = { ...m, state: 'running', reason: null, writer: newWriterToken('scheduler') };
    const generation = await this.ledger.writeManifest(resumed, manifest.generation);
    if (!generation) return manifest;
    await this.renameTasks(m.epoch);
    this.runtime.log.warn('pipeline.resumed', {
      previousReason: m.reason,
      note: 'the stream options no longer hide changes; changes committed while they did were never recorded by the stream: backfill the replica tables to repair them',
    });
    return { value: resumed, generation };
  }

  /**
   * Reader tasks are named after their partition's last write (ADR-601), and the tasks answered while the
   * pipeline was stopped used those names up: a new write of each unfinished entry (its writer token only)
   * gives the next tick fresh names to enqueue under.
   */
  private async renameTasks(epoch: number): Promise<void> {
    const listing = await this.ledger.listPartitions();
    for (const p of listing.partitions) {
      if (p.view.epoch !== epoch || (p.view.state !== 'ready' && p.view.state !== 'leased')) continue;
      await this.ledger.updatePartition(epoch, p.view.id, (e, writer) => ({
        ok: true,
        entry: { ...e, writer },
      }));
    }
  }
}
