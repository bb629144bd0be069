import type { WebSocket } from 'ws';
import type { NormalisedEvent, StoredEvent } from '../core/event.js';
import type { FilterNode } from '../core/filter-ast.js';
import type { Identity } from '../domain/auth/identity.js';
import type { GenericQuery, QueriesService } from '../domain/queries/queries-service.js';
import type { SearchResult } from '../event-store/query-plan.js';
import { compilePredicate, type EventLike, type Predicate } from '../query/filter/evaluate.js';
import type { QueryJob, QueryRunner } from '../query/runner.js';
import { newestFirst } from '../query/sort.js';
import { isRelative, resolveTimeRange } from '../query/time-range.js';
import type { PresentOptions } from '../query/types/query-type.js';
import type { SearchParams } from '../query/types/search.js';

/** What a client subscribes to. */
export type Target = { query_id: string } | { widget_id: number } | { dashboard_id: number };

/** The widgets behind a widget or dashboard subscription (from the dashboards service). */
export interface WidgetSource {
  /** The caller's visible widgets of the target with their query ids, started if needed. */
  resolve(
    who: Identity,
    target: { widget_id: number } | { dashboard_id: number },
  ): Promise<Array<{ widgetId: number; queryId: string; refreshMs: number | null; geo: boolean }>>;
  /**
   * Whether the caller may (still) see the target; false when it is gone or invisible.
   * Throws when that cannot be told now (a store is down): the subscription then stays.
   */
  visible(who: Identity, target: { widget_id: number } | { dashboard_id: number }): Promise<boolean>;
}

/** Who a connection is, re-checked while it lives (the tokens service). */
export interface IdentitySource {
  /** The token's identity now; null once the token is deleted or expired or its user deleted. */
  current(keyId: string): Promise<Identity | null>;
  /** A hint that this process changed tokens or rights: re-check at once. Returns `off`. */
  onInvalidate?(listener: () => void): () => void;
}

/** Close code of a connection whose token is no longer valid. */
export const CLOSE_TOKEN_INVALID = 4401;

export interface LiveHubOptions {
  /** Bytes a connection may have waiting to be sent before it is closed with 1013. */
  maxBufferedBytes: number;
  /** Largest accepted message from a client. */
  maxMessageBytes: number;
  /** Ping every this many ms; a client that missed one pong is dropped. */
  pingMs: number;
  /** Least time between two new-data re-evaluations of a watched Search (live tail). */
  tailMs: number;
  /** Least time between two re-evaluations of other watched relative queries. */
  refreshMs: number;
  /** Most re-evaluations the hub runs at once (the rest wait their turn); default 2. */
  maxEvaluations?: number;
  /**
   * Where each connection's token is re-checked every `recheckMs` (default 10 s): a
   * connection whose token or user is gone is closed with 4401; subscriptions its user
   * may no longer see end. It reads the shared metadata store, so changes made by any
   * process count; the in-process hint only makes local changes count sooner.
   */
  identities?: IdentitySource;
  recheckMs?: number;
  /**
   * Cluster mode: whether the bus reaches the other nodes now. While it does not, the
   * copies of watched queries are refreshed from the shared store every tick instead of
   * on their `query-changed` notices (polling).
   */
  busConnected?: () => boolean;
}

interface Watch {
  /** Subscription key as the client sent it (canonical JSON). */
  key: string;
  target: Target;
  widgetId: number | null;
  dashboardId: number | null;
  queryId: string;
}

interface Client {
  socket: WebSocket;
  who: Identity;
  watches: Watch[];
  alive: boolean;
}

/**
 * A watched query between its full evaluations. A Search in time order keeps the
 * matching events committed since, newest first (at most a page's worth), and how many
 * there were; a type that folds (TopN, LastN, Summary, Timeline) keeps the matching
 * events committed since, in batches by commit time, up to FOLD_MAX events.
 */
interface Tail {
  events: StoredEvent[];
  /** Matches per commit (commit time, count), for the total. */
  added: Array<{ at: number; n: number }>;
  /** Folding types: matching events per commit. */
  batches: Array<{ at: number; events: readonly NormalisedEvent[] }>;
  /** Events in `batches`. */
  size: number;
  /** Commit time of the first batch that did not fit: no folding until an evaluation after it. */
  overflowAt: number | null;
  /**
   * Folding types: the results of evaluation `of` (the job's results object) with the
   * first `folded` batches added, so each publish folds only what is new.
   */
  acc: { of: unknown; value: unknown; folded: number } | null;
  timer: NodeJS.Timeout | null;
  lastSent: number;
}

/** Most events a folding query keeps between its full evaluations (beyond: it waits for one). */
const FOLD_MAX = 50_000;

const targetKey = (t: Target) => JSON.stringify(t);

/**
 * The websocket hub: subscriptions to queries, widgets and dashboards; one serialisation
 * per update shared by all its subscribers; re-evaluation of watched relative-time queries
 * when matching events arrive (throttled) and as time passes; bounded send buffers.
 */
export class LiveHub {
  private readonly clients = new Set<Client>();
  private readonly counts = { messagesSent: 0, slowClientsClosed: 0 };
  /** query id → the clients' watches on it. */
  private readonly byQuery = new Map<string, Set<{ client: Client; watch: Watch }>>();
  private readonly lastEval = new Map<string, number>();
  /** Widget refresh intervals of watched queries (ms), where a widget sets one. */
  private readonly refreshOf = new Map<string, number>();
  /** Watched queries whose items a widget places by GeoIP (a map): sent with `geo`. */
  private readonly geoOf = new Set<string>();
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly tails = new Map<string, Tail>();
  private readonly predicates = new WeakMap<FilterNode, Predicate>();
  /** Re-evaluations waiting for a turn (each query once), and how many run. */
  private readonly due = new Set<string>();
  private evaluating = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly pinger: NodeJS.Timeout;
  private readonly offRunner: () => void;
  private readonly rechecker: NodeJS.Timeout | null;
  private readonly offIdentities: () => void;
  private rechecking: Promise<void> | null = null;
  private recheckAgain = false;
  private recheckSoon: NodeJS.Timeout | null = null;

  constructor(
    private readonly queries: QueriesService,
    private readonly runner: QueryRunner,
    private readonly widgets: WidgetSource | null,
    private readonly opts: LiveHubOptions,
  ) {
    this.offRunner = runner.onChange((job) => this.publish(job));
    this.timer = setInterval(() => this.tick(), Math.min(1000, opts.refreshMs)).unref();
    this.pinger = setInterval(() => this.ping(), opts.pingMs).unref();
    this.rechecker = opts.identities
      ? setInterval(() => void this.recheck(), opts.recheckMs ?? 10_000).unref()
      : null;
    this.offIdentities = opts.identities?.onInvalidate?.(() => this.scheduleRecheck()) ?? (() => undefined);
  }

  get connectionCount(): number {
    return this.clients.size;
  }

  /** Counts for /metrics. */
  stats() {
    let subscriptions = 0;
    for (const c of this.clients) subscriptions += c.watches.length;
    return {
      connections: this.clients.size,
      subscriptions,
      watchedQueries: this.byQuery.size,
      ...this.counts,
    };
  }

  /** A new authenticated connection. */
  attach(socket: WebSocket, who: Identity): void {
    const client: Client = { socket, who, watches: [], alive: true };
    this.clients.add(client);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('message', (data, isBinary) => {
      void this.onMessage(client, data as Buffer, isBinary);
    });
    socket.on('close', () => this.detach(client));
    socket.on('error', () => socket.terminate());
  }

  private detach(client: Client) {
    this.clients.delete(client);
    for (const w of client.watches) this.unwatch(client, w);
    client.watches = [];
  }

  /** A text frame; a Buffer is sent as it is (encoded once for all its subscribers). */
  private send(client: Client, text: string | Buffer): void {
    if (client.socket.readyState !== client.socket.OPEN) return;
    // What is still waiting from earlier messages decides: a large update alone is fine.
    if (client.socket.bufferedAmount > this.opts.maxBufferedBytes) {
      // A client that cannot keep up is dropped; the others go on.
      client.socket.close(1013, 'Too slow: send buffer full');
      this.counts.slowClientsClosed++;
      // A stalled peer may never answer the close handshake: cut it after a second.
      const socket = client.socket;
      setTimeout(() => socket.terminate(), 1000).unref();
      this.detach(client);
      return;
    }
    client.socket.send(text, { binary: false });
    this.counts.messagesSent++;
  }

  private reply(client: Client, command: string, params: unknown) {
    this.send(client, JSON.stringify([command, params]));
  }

  private error(client: Client, detail: string, command: unknown) {
    this.reply(client, 'error', { detail, command: command ?? null });
  }

  private async onMessage(client: Client, data: Buffer, isBinary: boolean): Promise<void> {
    if (isBinary || data.length > this.opts.maxMessageBytes) {
      this.error(
        client,
        isBinary ? 'Binary frames are not accepted.' : `Message over ${this.opts.maxMessageBytes} bytes.`,
        null,
      );
      return;
    }
    let msg: unknown;
    try {
      msg = JSON.parse(data.toString('utf8'));
    } catch {
      this.error(client, 'Messages are JSON arrays: [command, params].', null);
      return;
    }
    if (!Array.isArray(msg) || msg.length < 1 || msg.length > 2 || typeof msg[0] !== 'string') {
      this.error(client, 'Messages are JSON arrays: [command, params].', Array.isArray(msg) ? msg[0] : null);
      return;
    }
    const [command, params] = msg as [string, unknown];
    try {
      switch (command) {
        case 'ping':
          this.reply(client, 'pong', {});
          return;
        case 'subscribe':
          await this.subscribe(client, parseTarget(params));
          return;
        case 'unsubscribe': {
          const target = parseTarget(params);
          const key = targetKey(target);
          const mine = client.watches.filter((w) => w.key === key);
          if (!mine.length) throw new Error('Not subscribed to that target.');
          for (const w of mine) this.unwatch(client, w);
          client.watches = client.watches.filter((w) => w.key !== key);
          this.reply(client, 'unsubscribed', { target, subscriptions: this.targets(client) });
          return;
        }
        case 'unsubscribe_all':
          for (const w of client.watches) this.unwatch(client, w);
          client.watches = [];
          this.reply(client, 'unsubscribed', { target: null, subscriptions: [] });
          return;
        default:
          this.error(
            client,
            `Unknown command "${command}"; use subscribe, unsubscribe, unsubscribe_all or ping.`,
            command,
          );
      }
    } catch (err) {
      // A refused (un)subscription names its target, so a client with several knows which.
      const target = command === 'subscribe' || command === 'unsubscribe' ? targetOrNull(params) : null;
      if (target) this.reply(client, 'error', { detail: (err as Error).message, command, target });
      else this.error(client, (err as Error).message, command);
    }
  }

  private targets(client: Client): Target[] {
    const seen = new Map<string, Target>();
    for (const w of client.watches) seen.set(w.key, w.target);
    return [...seen.values()];
  }

  private async subscribe(client: Client, target: Target): Promise<void> {
    const key = targetKey(target);
    if (client.watches.some((w) => w.key === key)) {
      this.reply(client, 'subscribed', { target, subscriptions: this.targets(client) });
      return;
    }
    let watches: Watch[];
    if ('query_id' in target) {
      await this.queries.job(client.who, target.query_id);
      watches = [{ key, target, widgetId: null, dashboardId: null, queryId: target.query_id }];
    } else {
      if (!this.widgets) throw new Error('Widget subscriptions are not available.');
      const resolved = await this.widgets.resolve(client.who, target);
      for (const r of resolved) {
        if (r.refreshMs) this.refreshOf.set(r.queryId, r.refreshMs);
        if (r.geo) this.geoOf.add(r.queryId);
      }
      watches = resolved.map((r) => ({
        key,
        target,
        widgetId: r.widgetId,
        dashboardId: 'dashboard_id' in target ? target.dashboard_id : null,
        queryId: r.queryId,
      }));
    }
    client.watches.push(...watches);
    for (const w of watches) {
      let set = this.byQuery.get(w.queryId);
      if (!set) {
        set = new Set();
        this.byQuery.set(w.queryId, set);
      }
      set.add({ client, watch: w });
    }
    this.reply(client, 'subscribed', { target, subscriptions: this.targets(client) });
    // The current state of each watched query, then whatever changes.
    for (const w of watches) {
      const job = await this.queries.job(client.who, w.queryId);
      this.send(
        client,
        updateMessage(w, await this.queries.represent(this.withTail(job), this.present(w.queryId))),
      );
    }
  }

  private scheduleRecheck() {
    if (this.recheckSoon) return;
    this.recheckSoon = setTimeout(() => {
      this.recheckSoon = null;
      void this.recheck();
    }, 20).unref();
  }

  /**
   * Re-checks every connection against the metadata store: its token (deleted, expired, user deleted: closed with 4401) and its
   * current rights (widget and dashboard subscriptions it may no longer see end, each
   * named by an `error` message; the connection stays). One pass at a time.
   */
  recheck(): Promise<void> {
    if (this.rechecking) {
      this.recheckAgain = true;
      return this.rechecking;
    }
    this.rechecking = this.recheckAll()
      .catch(() => undefined)
      .finally(() => {
        this.rechecking = null;
        if (this.recheckAgain) {
          this.recheckAgain = false;
          void this.recheck();
        }
      });
    return this.rechecking;
  }

  private async recheckAll(): Promise<void> {
    const identities = this.opts.identities;
    if (!identities) return;
    // Connections sharing a token (tabs) cost one lookup.
    const byKey = new Map<string, Client[]>();
    for (const c of this.clients) {
      const list = byKey.get(c.who.keyId);
      if (list) list.push(c);
      else byKey.set(c.who.keyId, [c]);
    }
    for (const [keyId, clients] of byKey) {
      let who: Identity | null;
      try {
        who = await identities.current(keyId);
      } catch {
        // The store cannot tell now: keep the connections, ask again next time.
        continue;
      }
      for (const client of clients) {
        if (!this.clients.has(client)) continue;
        if (!who) {
          this.revoke(client);
          continue;
        }
        const changed = !sameRights(client.who, who);
        client.who = who;
        // Rights unchanged: what the client may see is unchanged too.
        if (changed) await this.recheckWatches(client);
      }
    }
  }

  /** The token is no longer valid: close with 4401 (cut if the peer does not answer). */
  private revoke(client: Client) {
    const socket = client.socket;
    socket.close(CLOSE_TOKEN_INVALID, 'Token is no longer valid.');
    setTimeout(() => socket.terminate(), 1000).unref();
    this.detach(client);
  }

  /** Ends the widget and dashboard subscriptions the connection's user may no longer see. */
  private async recheckWatches(client: Client) {
    const widgets = this.widgets;
    if (!widgets) return;
    // Query subscriptions are the owner's own queries: a token's user never changes.
    for (const target of this.targets(client)) {
      if ('query_id' in target) continue;
      let ok: boolean;
      try {
        ok = await widgets.visible(client.who, target);
      } catch {
        continue;
      }
      const key = targetKey(target);
      if (ok || !this.clients.has(client) || !client.watches.some((w) => w.key === key)) continue;
      for (const w of client.watches) if (w.key === key) this.unwatch(client, w);
      client.watches = client.watches.filter((w) => w.key !== key);
      const what = 'widget_id' in target ? `widget ${target.widget_id}` : `dashboard ${target.dashboard_id}`;
      this.reply(client, 'error', {
        detail: `Subscription to ${what} ended: you may no longer see it.`,
        command: 'subscribe',
        target,
      });
      this.reply(client, 'unsubscribed', { target, subscriptions: this.targets(client) });
    }
  }

  private unwatch(client: Client, watch: Watch) {
    const set = this.byQuery.get(watch.queryId);
    if (!set) return;
    for (const entry of set) if (entry.client === client && entry.watch === watch) set.delete(entry);
    if (set.size === 0) {
      // The last subscriber gone: no more live re-evaluation for this query.
      this.byQuery.delete(watch.queryId);
      this.refreshOf.delete(watch.queryId);
      this.geoOf.delete(watch.queryId);
      clearTimeout(this.pending.get(watch.queryId));
      this.pending.delete(watch.queryId);
      const tail = this.tails.get(watch.queryId);
      if (tail?.timer) clearTimeout(tail.timer);
      this.tails.delete(watch.queryId);
    }
  }

  /** A query changed: one representation, one message text per (widget, dashboard). */
  private async publish(job: QueryJob): Promise<void> {
    const set = this.byQuery.get(job.id);
    if (!set?.size) return;
    const data = await this.queries.represent(this.withTail(job), this.present(job.id));
    const texts = new Map<string, Buffer>();
    const removed = this.runner.peek(job.id) === undefined;
    for (const { client, watch } of [...set]) {
      const k = `${watch.widgetId}:${watch.dashboardId}`;
      let text = texts.get(k);
      if (text === undefined) {
        text = Buffer.from(updateMessage(watch, data));
        texts.set(k, text);
      }
      this.send(client, text);
      if (removed) {
        client.watches = client.watches.filter((w) => w !== watch);
        this.unwatch(client, watch);
        this.reply(client, 'unsubscribed', { target: watch.target, subscriptions: this.targets(client) });
      }
    }
  }

  /** Read-time options of a watched query's updates. */
  private present(queryId: string): PresentOptions {
    return this.geoOf.has(queryId) ? { addGeoipData: true } : {};
  }

  private predicate(job: QueryJob): Predicate {
    let p = this.predicates.get(job.filter);
    if (!p) {
      p = compilePredicate(job.filter);
      this.predicates.set(job.filter, p);
    }
    return p;
  }

  /**
   * Whether the job's last evaluation succeeded and commits can be added to it in memory:
   * a Search in time order (tailed), or a type that folds these params.
   */
  private tailable(job: QueryJob): 'tail' | 'fold' | null {
    if (job.status !== 'SUCCESS' || job.results === null) return null;
    if (job.type === 'Search') {
      const sort = (job.params as SearchParams).sort;
      return sort?.length === 1 && sort[0] === '-ts' ? 'tail' : null;
    }
    return job.def.fold?.accepts(job.params) ? 'fold' : null;
  }

  /**
   * The job as last evaluated plus its tail: the newest page of both, and the total plus
   * the matches committed since the evaluation started. Exact again at each evaluation
   * (every refresh interval); in between, events leaving the window beyond the page are
   * still counted, and one committed while the evaluation ran may be counted twice.
   */
  private withTail(job: QueryJob): QueryJob {
    const tail = this.tails.get(job.id);
    const how = tail ? this.tailable(job) : null;
    if (!tail || !how) return job;
    if (how === 'fold') return this.folded(job, tail);
    // What the last evaluation certainly saw is dropped from the tail.
    tail.events = tail.events.filter((e) => e.stored_at >= job.baseMs);
    tail.added = tail.added.filter((a) => a.at >= job.baseMs);
    if (!tail.added.length) return job;
    const now = Date.now();
    const window = resolveTimeRange(job.params.time_range, now);
    const params = job.params as SearchParams;
    const r = job.results as SearchResult;
    const kept = r.events.filter((e) => e.ts >= window.fromMs);
    const have = new Set(kept.map((e) => e.ev_id));
    const fresh = tail.events.filter((e) => !have.has(e.ev_id));
    // A page event out of the window means every older match is out too.
    const base = kept.length < r.events.length ? kept.length : r.total;
    const added = tail.added.reduce((n, a) => n + a.n, 0) - (tail.events.length - fresh.length);
    const events = [...fresh, ...kept].sort(newestFirst).slice(0, params.page * params.page_size);
    return {
      ...job,
      results: { total: base + added, events } satisfies SearchResult,
      baseMs: now,
      window,
      updatedAt: new Date(now).toISOString(),
    };
  }

  /**
   * The job as last evaluated with the matching events committed since folded in (the
   * type's `fold`); as evaluated when more arrived than are kept.
   */
  private folded(job: QueryJob, tail: Tail): QueryJob {
    const fold = job.def.fold;
    if (tail.overflowAt !== null && tail.overflowAt < job.baseMs) tail.overflowAt = null;
    if (!fold || tail.overflowAt !== null) return job;
    let acc = tail.acc;
    if (!acc || acc.of !== job.results) {
      // A new evaluation: what it certainly saw is dropped, the rest folded into it anew.
      tail.batches = tail.batches.filter((b) => b.at >= job.baseMs);
      tail.size = tail.batches.reduce((n, b) => n + b.events.length, 0);
      acc = { of: job.results, value: job.results, folded: 0 };
      tail.acc = acc;
    }
    // Only the batches not folded yet: each event is added once.
    if (acc.folded < tail.batches.length) {
      const events = tail.batches.slice(acc.folded).flatMap((b) => b.events) as unknown as EventLike[];
      acc.value = fold.apply(acc.value, events, job.params, job.window);
      acc.folded = tail.batches.length;
    }
    if (acc.value === job.results) return job;
    const now = Date.now();
    return {
      ...job,
      results: acc.value,
      baseMs: now,
      window: resolveTimeRange(job.params.time_range, now),
      updatedAt: new Date(now).toISOString(),
    };
  }

  /** Matching new events of a tailed or folded query: kept, and sent at most every `tailMs`. */
  private tailEvents(
    job: QueryJob,
    how: 'tail' | 'fold',
    events: readonly NormalisedEvent[],
    match: Predicate,
    now: number,
  ) {
    const window = resolveTimeRange(job.params.time_range, now);
    const matched: NormalisedEvent[] = [];
    for (const e of events) {
      if (e.ts >= window.fromMs && e.ts < window.toMs && match(e as unknown as EventLike)) matched.push(e);
    }
    if (!matched.length) return;
    let tail = this.tails.get(job.id);
    if (!tail) {
      tail = {
        events: [],
        added: [],
        batches: [],
        size: 0,
        overflowAt: null,
        acc: null,
        timer: null,
        lastSent: 0,
      };
      this.tails.set(job.id, tail);
    }
    if (how === 'tail') {
      const params = job.params as SearchParams;
      const stored = matched.map((e): StoredEvent => ({ ...e, stored_at: now }));
      tail.events = [...stored, ...tail.events].sort(newestFirst).slice(0, params.page * params.page_size);
      tail.added.push({ at: now, n: matched.length });
    } else {
      if (tail.overflowAt !== null && tail.overflowAt < job.baseMs) tail.overflowAt = null;
      if (tail.overflowAt !== null) return;
      if (tail.size + matched.length > FOLD_MAX) {
        // Too many to keep: the next full evaluation (refresh interval) catches up.
        tail.overflowAt = now;
        tail.batches = [];
        tail.size = 0;
        tail.acc = null;
        return;
      }
      tail.batches.push({ at: now, events: matched });
      tail.size += matched.length;
    }
    if (tail.timer) return;
    const t = tail;
    t.timer = setTimeout(
      () => {
        t.timer = null;
        t.lastSent = Date.now();
        void this.publish(job);
      },
      Math.max(0, t.lastSent + this.opts.tailMs - now),
    );
  }

  /**
   * New events committed. A watched Search in time order takes the matching ones in
   * memory (its full re-evaluation waits for the refresh interval); other watched
   * relative queries they could change are re-evaluated, throttled.
   */
  eventsArrived(events: readonly NormalisedEvent[]): void {
    const now = Date.now();
    for (const queryId of this.byQuery.keys()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range)) continue;
      const match = this.predicate(job);
      const how = this.tailable(job);
      if (how) {
        this.tailEvents(job, how, events, match, now);
        continue;
      }
      if (this.pending.has(queryId)) continue;
      if (!events.some((e) => match(e as unknown as Parameters<typeof match>[0]))) continue;
      this.reevaluateAfter(queryId, job.type === 'Search' ? this.opts.tailMs : this.refreshMs(queryId), now);
    }
  }

  /** A re-evaluation of `queryId` at least `gap` ms after its last one. */
  private reevaluateAfter(queryId: string, gap: number, now: number) {
    const wait = Math.max(0, (this.lastEval.get(queryId) ?? 0) + gap - now);
    this.pending.set(
      queryId,
      setTimeout(() => {
        this.pending.delete(queryId);
        this.reevaluate(queryId);
      }, wait),
    );
  }

  /**
   * Another node committed events (a summary: count and time bounds). Watched relative
   * queries whose window they touch are re-evaluated, throttled like a live tail; the
   * job's lease makes one node compute for all.
   */
  committedElsewhere(commit: { count: number; fromMs: number; toMs: number }): void {
    const now = Date.now();
    for (const queryId of this.byQuery.keys()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range) || this.pending.has(queryId)) continue;
      const window = resolveTimeRange(job.params.time_range, now);
      if (commit.toMs < window.fromMs || commit.fromMs >= window.toMs) continue;
      this.reevaluateAfter(queryId, this.opts.tailMs, now);
    }
  }

  private refreshMs(queryId: string): number {
    return this.refreshOf.get(queryId) ?? this.opts.refreshMs;
  }

  /** Whether anyone watches a query (the TTL sweep keeps those). */
  watches(queryId: string): boolean {
    return this.byQuery.has(queryId);
  }

  /**
   * Queues a re-evaluation. A few run at once: a tick that finds every watched query due
   * must not start them all together (a burst of engine connections and statements that
   * starves ingest); the others wait their turn, each query at most once.
   */
  private reevaluate(queryId: string) {
    this.due.add(queryId);
    this.drain();
  }

  private drain() {
    for (const queryId of this.due) {
      if (this.evaluating >= (this.opts.maxEvaluations ?? 2)) return;
      this.due.delete(queryId);
      const job = this.runner.peek(queryId);
      if (!job || !this.byQuery.has(queryId)) continue;
      this.lastEval.set(queryId, Date.now());
      this.runner.reevaluate(job);
      const running = job.running;
      if (!running) continue;
      this.evaluating++;
      void running.finally(() => {
        this.evaluating--;
        this.drain();
      });
    }
  }

  /** Time passes: watched relative queries are re-evaluated at least every refresh interval. */
  private tick() {
    const now = Date.now();
    if (this.opts.busConnected && !this.opts.busConnected()) this.poll();
    for (const queryId of this.byQuery.keys()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range)) continue;
      if (now - (this.lastEval.get(queryId) ?? job.baseMs) >= this.refreshMs(queryId))
        this.reevaluate(queryId);
    }
  }

  /** The bus is down: watched queries other nodes compute are read from the shared store. */
  private poll() {
    for (const queryId of this.byQuery.keys()) {
      const job = this.runner.peek(queryId);
      if (!job || job.running) continue;
      this.runner.follow(job).catch(() => undefined);
    }
  }

  private ping() {
    for (const c of this.clients) {
      if (!c.alive) {
        c.socket.terminate();
        this.detach(c);
        continue;
      }
      c.alive = false;
      c.socket.ping();
    }
  }

  close(): void {
    clearInterval(this.timer);
    clearInterval(this.pinger);
    if (this.rechecker) clearInterval(this.rechecker);
    if (this.recheckSoon) clearTimeout(this.recheckSoon);
    this.offIdentities();
    for (const t of this.pending.values()) clearTimeout(t);
    this.due.clear();
    for (const t of this.tails.values()) if (t.timer) clearTimeout(t.timer);
    this.offRunner();
    // terminate, not close: a stalled client would hold a closing handshake open forever.
    for (const c of this.clients) c.socket.terminate();
  }
}

/** Whether two identities of one token grant the same (rights may only have changed). */
function sameRights(a: Identity, b: Identity): boolean {
  return (
    a.userId === b.userId &&
    a.isAdmin === b.isAdmin &&
    a.permissions.size === b.permissions.size &&
    [...a.permissions].every((p) => b.permissions.has(p))
  );
}

function updateMessage(w: Watch, data: GenericQuery): string {
  return JSON.stringify(['widget-update', { widget_id: w.widgetId, dashboard_id: w.dashboardId, data }]);
}

function targetOrNull(params: unknown): Target | null {
  try {
    return parseTarget(params);
  } catch {
    return null;
  }
}

function parseTarget(params: unknown): Target {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new Error('Params must be an object: {"query_id"}, {"widget_id"} or {"dashboard_id"}.');
  }
  const p = params as Record<string, unknown>;
  const keys = Object.keys(p);
  if (keys.length !== 1) throw new Error('Name exactly one of query_id, widget_id, dashboard_id.');
  if (typeof p.query_id === 'string' && p.query_id.length > 0 && p.query_id.length <= 64)
    return { query_id: p.query_id };
  if (Number.isInteger(p.widget_id) && (p.widget_id as number) > 0)
    return { widget_id: p.widget_id as number };
  if (Number.isInteger(p.dashboard_id) && (p.dashboard_id as number) > 0)
    return { dashboard_id: p.dashboard_id as number };
  throw new Error('query_id must be a string; widget_id and dashboard_id positive integers.');
}
