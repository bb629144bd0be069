import { counter, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import type { EventStore, EventStoreStats } from '../../event-store/event-store.js';
import { SYSTEM_SCOPE } from '../../event-store/read-scope.js';
import type { FilterNode } from '../../filter/ast.js';
import { not, or, TRUE } from '../../filter/builders.js';
import { membership } from './membership.js';
import type { StreamRow, StreamsRepository } from './streams-repository.js';

const DAY_MS = 86_400_000;
const NOTHING = not(TRUE);

export interface RetentionSettings {
  /** Days the events of a stream without its own retention_days are kept (0: forever). */
  retentionDays: number;
  /** Most bytes the event store may hold (0: no limit). */
  retentionMaxBytes: number;
}

export interface RetentionRun {
  /** Events deleted because every stream they belong to let them go. */
  retention: number;
  /** Events deleted, oldest first, to bring the store under retentionMaxBytes. */
  max_bytes: number;
}

/**
 * Retention per stream. An event lives as long as the longest retention of the streams it
 * belongs to (a stream's `retention_days`, or the `retentionDays` setting when null; 0 is
 * forever). For each distinct retention, longest first, the events older than it are
 * deleted except those a stream kept longer claims; with no such stream the store deletes
 * whole days (DuckDB row groups, ClickHouse partitions). Then, past `retentionMaxBytes`,
 * the oldest events go until the store's data fits.
 */
export class StreamRetention implements MetricsSource {
  private readonly deleted: RetentionRun = { retention: 0, max_bytes: 0 };

  constructor(
    private readonly store: EventStore,
    private readonly streams: StreamsRepository,
    private readonly settings: RetentionSettings,
  ) {}

  async run(now = Date.now()): Promise<RetentionRun> {
    const out: RetentionRun = { retention: 0, max_bytes: 0 };
    const rows = await this.streams.all();
    const filters = membership(rows);
    const days = (r: StreamRow) => r.retention_days ?? this.settings.retentionDays;
    const levels = [...new Set(rows.map(days).filter((d) => d > 0))].sort((a, b) => b - a);
    for (const d of levels) {
      // Kept: the events of every stream that keeps them longer than d days (or forever).
      const keep = rows
        .filter((r) => days(r) === 0 || days(r) > d)
        .map((r) => filters.get(r.id))
        .filter((f): f is FilterNode => f !== undefined);
      const cut = now - d * DAY_MS;
      const [first, ...rest] = keep;
      out.retention += await (first
        ? this.store.deleteOlderThan(cut, or(first, ...rest))
        : this.store.deleteOlderThan(cut));
    }
    out.max_bytes = await this.fit();
    this.deleted.retention += out.retention;
    this.deleted.max_bytes += out.max_bytes;
    return out;
  }

  /**
   * Past retentionMaxBytes: deletes the oldest events, as many as the excess holds at the
   * store's bytes per event (found by their time, so a whole second goes or stays).
   */
  private async fit(): Promise<number> {
    const max = this.settings.retentionMaxBytes;
    if (max <= 0) return 0;
    // Both tiers count: whole cold files go first, oldest first (docs/operations/cold-tier.md).
    const coldBytes = (await this.store.coldFiles()).reduce((n, f) => n + f.bytes, 0);
    let stats = await this.store.stats();
    const over = stats.dataBytes + coldBytes - max;
    if (over <= 0) return 0;
    const cold = coldBytes > 0 ? await this.store.dropOldestCold(over) : { events: 0, bytes: 0 };
    if (cold.bytes >= over) return cold.events;
    stats = await this.store.stats();
    return cold.events + (await this.fitHot(stats, max));
  }

  /** Past retentionMaxBytes with the hot tier alone over it: its oldest events go. */
  private async fitHot(stats: EventStoreStats, max: number): Promise<number> {
    if (stats.dataBytes <= max || stats.events === 0) return 0;
    const over = Math.ceil(((stats.dataBytes - max) / stats.dataBytes) * stats.events);
    if (stats.oldestTs === null || stats.newestTs === null) return 0;
    const oldest = await this.store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: TRUE,
      range: { fromMs: stats.oldestTs, toMs: stats.newestTs + 1 },
      sort: [{ field: 'ts', desc: false }],
      limit: 1,
      offset: Math.min(over, stats.events) - 1,
      count: false,
    });
    const last = oldest.events[0];
    if (!last) return 0;
    // Exactly the events before it, on every store (nothing kept: not whole days only).
    return this.store.deleteOlderThan(last.ts + 1, NOTHING);
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_events_deleted_total',
        'Events deleted in the background, by reason: retention (every stream of the event let it go) or max_bytes (retentionMaxBytes).',
        () => ({ ...this.deleted }),
        'reason',
      ),
    ];
  }
}
