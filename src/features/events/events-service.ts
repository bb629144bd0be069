import type { StoredEvent } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import { cachedFor, gauge, type MetricDecl, STORE_STATS_MS } from '../../core/metrics.js';
import { presentEvent } from '../../core/present-event.js';
import { rebuildRecord } from '../../core/record-shape.js';
import { notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { type ReadAudit, type ReadOrigin, recorded } from '../../query/read-audit.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import {
  decodeCursor,
  firstWindow,
  nearest,
  type Side,
  sidePage,
  sidePlan,
  sideRows,
  sourceOf,
} from './event-context.js';
import type { EnrichOptions, ResultEnricher, ResultEnricherDeps } from './result-enricher.js';

const seconds = (ms: number) => ms / 1000;

/** An event with `raw`: the record as sent, rebuilt from its columns and shape (GET /api/events/{ev_id}). */
export const presentEventWithRaw = (e: StoredEvent) => ({ ...presentEvent(e), raw: rebuildRecord(e) });

export class EventsService {
  constructor(
    private readonly store: EventStore,
    private readonly enricher: ResultEnricher,
    private readonly triggerMatches: ResultEnricherDeps['triggerMatches'],
    private readonly scopes: ReadScopes,
    /** Every read of an event by id is recorded here, whatever door it came through (docs/api/audit.md). */
    private readonly audit: ReadAudit,
  ) {}

  /** Runs a read of the event `evId` and records it (`event.read`, or `event.context`). */
  private recorded<T>(
    who: Identity,
    origin: ReadOrigin,
    evId: string,
    action: 'event.read' | 'event.context',
    detail: Record<string, unknown>,
    read: () => Promise<T>,
    describe?: (answer: T) => { detail: Record<string, unknown> },
  ): Promise<T> {
    return recorded(
      this.audit,
      { who, origin, action, target: { kind: 'event', id: evId }, detail },
      read,
      describe,
    );
  }

  /** The event, if `who` may read it: 404 otherwise, as for one that does not exist. */
  private async load(who: Identity, evId: string): Promise<StoredEvent> {
    const e = await this.store.getById(evId, await this.scopes.of(who));
    if (!e) throw notFound('No such event.');
    return e;
  }

  /** Size and age of the event store. */
  storeStats() {
    return this.store.stats();
  }

  /** The store is asked at most every 10 s, whatever the scrape rate (see cachedFor). */
  private readonly cachedStats = cachedFor(STORE_STATS_MS, () => this.store.stats());

  metrics(): MetricDecl[] {
    return [
      gauge(
        'logscope_events_stored',
        'Events in the event store.',
        async () => (await this.cachedStats()).events,
      ),
      gauge(
        'logscope_event_store_bytes',
        'Bytes the event store occupies on disk (file and write-ahead log).',
        async () => (await this.cachedStats()).bytesOnDisk,
      ),
      gauge(
        'logscope_oldest_event_age_seconds',
        'Age of the oldest stored event by its time (0 when the store is empty); watch it against retentionDays.',
        async () => {
          const { oldestTs } = await this.cachedStats();
          return oldestTs === null ? 0 : Math.max(0, (Date.now() - oldestTs) / 1000);
        },
      ),
    ];
  }

  /** The event with `raw`, plus what `opts` asks for (actions_hint, add_trigger_data). */
  async get(who: Identity, evId: string, opts: EnrichOptions, origin: ReadOrigin) {
    return this.recorded(who, origin, evId, 'event.read', {}, async () =>
      this.enricher.event(presentEventWithRaw(await this.load(who, evId)), { ...opts, who }),
    );
  }

  async timestamps(who: Identity, evId: string, origin: ReadOrigin) {
    return this.recorded(who, origin, evId, 'event.read', { part: 'timestamps' }, async () => {
      const e = await this.load(who, evId);
      return {
        ev_id: e.ev_id,
        event_time: seconds(e.ts),
        received_time: seconds(e.received_at),
        stored_time: seconds(e.stored_at),
      };
    });
  }

  /**
   * The events of the anchor's source around it (docs/api/events.md), in the order they happened:
   * `before` and `after` of the same `by` values, nearest first from the store, shown
   * oldest first. With a cursor, one side continues. Only events `who` may read.
   */
  context(
    who: Identity,
    evId: string,
    opts: { before?: number; after?: number; by?: string; cursor?: string },
    origin: ReadOrigin,
  ) {
    const asked = {
      before: opts.before ?? null,
      after: opts.after ?? null,
      by: opts.by ?? null,
      cursor: opts.cursor !== undefined,
    };
    return this.recorded(
      who,
      origin,
      evId,
      'event.context',
      asked,
      () => this.readContext(who, evId, opts),
      (answer) => ({
        detail: { events: (answer.before?.length ?? 0) + (answer.after?.length ?? 0) },
      }),
    );
  }

  private async readContext(
    who: Identity,
    evId: string,
    opts: { before?: number; after?: number; by?: string; cursor?: string },
  ): Promise<{
    anchor: ReturnType<typeof presentEvent>;
    by: ReturnType<typeof sourceOf>;
    before?: ReturnType<typeof presentEvent>[];
    after?: ReturnType<typeof presentEvent>[];
    before_cursor?: string | null;
    after_cursor?: string | null;
  }> {
    // The anchor and the store's span are read at once (each a few ms on a large store).
    const [scope, anchor, stats] = await Promise.all([
      this.scopes.of(who),
      this.load(who, evId),
      this.store.stats(),
    ]);
    const span = { oldest: stats.oldestTs ?? anchor.ts, newest: stats.newestTs ?? anchor.ts };
    const side = async (
      s: Side,
      from: Parameters<typeof sidePlan>[2],
      by: ReturnType<typeof sourceOf>,
      n: number,
    ) => {
      if (n === 0) return { events: [] as StoredEvent[], cursor: null };
      const rows = sideRows(n);
      const found = await nearest(
        (window) => this.store.execute(sidePlan(scope, by, from, s, rows, window)),
        s,
        from.ts,
        span,
        rows,
        firstWindow((a, b) => this.store.estimateInRange(a, b), s, from.ts, span),
      );
      const page = sidePage(s, found, n, by);
      return { events: s === 'before' ? page.events.reverse() : page.events, cursor: page.cursor };
    };
    if (opts.cursor !== undefined) {
      const c = decodeCursor(opts.cursor);
      const n = (c.side === 'before' ? opts.before : opts.after) ?? 50;
      const got = await side(c.side, c, c.by, n);
      return {
        anchor: presentEvent(anchor),
        by: c.by,
        [c.side]: got.events.map(presentEvent),
        [`${c.side}_cursor`]: got.cursor,
      };
    }
    const by = sourceOf(anchor, opts.by);
    const [before, after] = await Promise.all([
      side('before', anchor, by, opts.before ?? 50),
      side('after', anchor, by, opts.after ?? 50),
    ]);
    return {
      anchor: presentEvent(anchor),
      by,
      before: before.events.map(presentEvent),
      after: after.events.map(presentEvent),
      before_cursor: before.cursor,
      after_cursor: after.cursor,
    };
  }

  /** The triggers the event matched, oldest match first. */
  async triggers(who: Identity, evId: string, origin: ReadOrigin) {
    return this.recorded(who, origin, evId, 'event.read', { part: 'triggers' }, async () => {
      const e = await this.load(who, evId);
      return {
        ev_id: e.ev_id,
        triggers: [...((await this.triggerMatches([e.ev_id], who)).get(e.ev_id) ?? [])],
      };
    });
  }
}
