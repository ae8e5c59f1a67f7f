/**
 * The change streams of one database and their partitions. Stream names are case-insensitive, so both maps
 * are keyed by lower-case name. Dropped names are remembered: a query on a dropped stream fails with
 * NOT_FOUND like the service, rather than falling through to the core as an unknown function.
 */
import { Code, type SchemaView, SpannerError } from '../hooks';
import { applyCommand } from './catalog';
import type { DdlCommand } from './ddl-parse';
import type { StreamDefinition } from './model';
import { type ChurnEvent, PartitionSet } from './partitions';
import { parseDurationNs } from './time';

/** The service's default retention period: one day. */
const DEFAULT_RETENTION_NS = 86_400_000_000_000n;

/** A stream's retention period in ns (its `retention_period` option, else the default). */
export function retentionNs(stream: StreamDefinition): bigint {
  return stream.options.retention_period
    ? (parseDurationNs(stream.options.retention_period) ?? DEFAULT_RETENTION_NS)
    : DEFAULT_RETENTION_NS;
}

/** One live stream: its lower-case key, definition and partitions. */
export interface LiveStream {
  key: string;
  stream: StreamDefinition;
  partitions: PartitionSet;
}

/** The streams of one database. */
export class StreamRegistry {
  private readonly streams = new Map<string, StreamDefinition>();
  private readonly sets = new Map<string, PartitionSet>();
  private readonly dropped = new Set<string>();

  constructor(
    private readonly initialPartitions: number,
    private readonly checkRetention: boolean,
  ) {}

  /** Applies a change-stream DDL command; a created stream starts with fresh partitions at `nowNs`. */
  apply(command: DdlCommand, schema: SchemaView, nowNs: bigint): void {
    const { created, dropped } = applyCommand(this.streams, command, schema, nowNs, this.checkRetention);
    if (created) {
      const key = created.name.toLowerCase();
      this.sets.set(key, new PartitionSet(created.name, this.initialPartitions, nowNs));
      this.dropped.delete(key);
    }
    if (dropped) {
      const key = dropped.name.toLowerCase();
      this.sets.delete(key);
      this.dropped.add(key);
    }
  }

  /** The live stream called `name`; undefined when unknown, NOT_FOUND when it was dropped. */
  find(name: string): LiveStream | undefined {
    const key = name.toLowerCase();
    const stream = this.streams.get(key);
    const partitions = this.sets.get(key);
    if (!stream || !partitions) {
      if (this.dropped.has(key)) throw new SpannerError(Code.NOT_FOUND, `Change Stream not found: ${name}`);
      return undefined;
    }
    return { key, stream, partitions };
  }

  /** Whether `stream` still stands under `key` (it was neither dropped nor dropped and created again). */
  isCurrent(key: string, stream: StreamDefinition): boolean {
    return this.streams.get(key) === stream;
  }

  /** Every live stream, in creation order. */
  live(): LiveStream[] {
    const out: LiveStream[] = [];
    for (const [key, stream] of this.streams) {
      const partitions = this.sets.get(key);
      if (partitions) out.push({ key, stream, partitions });
    }
    return out;
  }

  /** The partition sets of every stream, or only of `only` (any case), by key. */
  selected(only?: string): Array<[string, PartitionSet]> {
    return [...this.sets.entries()].filter(([key]) => only === undefined || key === only.toLowerCase());
  }

  /** Churns the partitions of every stream (or of `only`) at `atNs`. */
  churn(atNs: bigint, only?: string): ChurnEvent[] {
    return this.selected(only).map(([, set]) => set.churn(atNs));
  }

  /** The declared name of the stream under `key` (the key itself once the stream is gone). */
  nameOf(key: string): string {
    return this.streams.get(key)?.name ?? key;
  }

  /** Every stream definition, in creation order. */
  definitions(): StreamDefinition[] {
    return [...this.streams.values()];
  }
}
