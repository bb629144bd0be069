import type { EventStore } from '../../event-store/event-store.js';
import { membership } from './membership.js';
import type { StreamTiersView } from './stream-schema.js';
import type { StreamsRepository } from './streams-repository.js';

/**
 * Each stream's events and bytes in each tier (docs/operations/cold-tier.md), as of the
 * cold tier's last round: hot, the stream's events in the event store by its rule (all
 * time) and their share of the store's bytes (its used blocks and its write-ahead log, as
 * they are: no checkpoint is forced for a figure, since a checkpoint holds every commit
 * for its length, 0.6-1.5 s at 1 M events); cold, the exact sums over the files filed
 * under it. Computed at the first read when no round has run yet, and for a stream made
 * since the last round, its own alone.
 */
export class StreamTiers {
  private figures = new Map<number, StreamTiersView>();
  private computed: Promise<void> | null = null;

  constructor(
    private readonly events: EventStore,
    private readonly streams: StreamsRepository,
  ) {}

  /** Computes them again (the cold tier's round, once it has moved what it moves). */
  refresh(now = Date.now()): Promise<void> {
    const run = this.compute(now);
    this.computed = run.catch(() => {
      this.computed = null;
    });
    return run;
  }

  /** A stream's figures (computing them first when no round has yet). */
  async of(ids: readonly number[]): Promise<Map<number, StreamTiersView>> {
    if (!this.computed) await this.refresh();
    else await this.computed;
    // A stream made since: its own figures now (no checkpoint, the others as they were).
    const missing = ids.filter((id) => !this.figures.has(id));
    if (missing.length) await this.compute(Date.now(), missing);
    return this.figures;
  }

  /** Every stream's figures, or only those of `only`, added to the rest. */
  private async compute(now: number, only?: readonly number[]): Promise<void> {
    const rows = await this.streams.all();
    const filters = membership(rows);
    const ids = rows.map((r) => r.id).filter((id) => filters.has(id) && (!only || only.includes(id)));
    const [hot, stats, files] = await Promise.all([
      this.events.countHot(ids.map((id) => filters.get(id) as NonNullable<ReturnType<typeof filters.get>>)),
      this.events.stats(),
      this.events.coldFiles(),
    ]);
    const asOf = new Date(now).toISOString();
    const figures = only ? new Map(this.figures) : new Map<number, StreamTiersView>();
    ids.forEach((id, i) => {
      const events = hot[i] ?? 0;
      const own = files.filter((f) => f.streamId === id);
      const oldest = own.length ? Math.min(...own.map((f) => f.minTs)) : null;
      const newest = own.length ? Math.max(...own.map((f) => f.maxTs)) : null;
      figures.set(id, {
        hot: { events, bytes: stats.events ? Math.round((stats.dataBytes * events) / stats.events) : 0 },
        cold: {
          events: own.reduce((n, f) => n + f.rows, 0),
          bytes: own.reduce((n, f) => n + f.bytes, 0),
          files: own.length,
          oldest_ts: oldest === null ? null : Math.floor(oldest / 1000),
          newest_ts: newest === null ? null : Math.floor(newest / 1000),
        },
        as_of: asOf,
      });
    });
    this.figures = figures;
  }
}
