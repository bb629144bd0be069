import type { WebSocket } from 'ws';
import type { NormalisedEvent } from '../../core/event.js';
import type { Identity } from '../../core/identity.js';
import { counter, gauge, type MetricDecl } from '../../core/metrics.js';
import { AppError, badRequest, conflict, notFound } from '../../errors/errors.js';
import type { EventLike } from '../../filter/evaluate.js';
import type { QueryJob } from '../../query/job.js';
import type { QueryRunner } from '../../query/runner.js';
import { isRelative } from '../../query/time-range.js';
import type { PresentOptions } from '../../query/types/query-type.js';
import type { GenericQuery, QueriesService } from '../queries/queries-service.js';
import { IdentityRechecker } from './identity-recheck.js';
import { Outbox } from './outbox.js';
import { decode, parseTarget, type Target, targetKey, targetOrNull, updateFrame } from './protocol.js';
import { ReevaluationScheduler } from './scheduler.js';
import type { IdentitySource, WidgetSource } from './sources.js';
import { type Client, SubscriptionRegistry, type Watch } from './subscriptions.js';
import { TailMerge } from './tail-merge.js';

export { CLOSE_TOKEN_INVALID, type Target } from './protocol.js';
export type { IdentitySource, WidgetSource } from './sources.js';

export interface LiveHubOptions {
  /** Bytes a connection may have waiting to be sent before it is closed with 1013. */
  maxBufferedBytes: number;
  /** Largest accepted message from a client. */
  maxMessageBytes: number;
  /** Largest update sent; a larger one ends its subscription with an `error`. */
  maxUpdateBytes: number;
  /** Where failures that end subscriptions are logged (the app's logger). */
  log?: { error(obj: object, msg: string): void };
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

/**
 * The websocket hub, put together from its seams: the protocol (`protocol.ts`), the
 * subscription registry (`subscriptions.ts`), the tail merge of this node's commits
 * (`tail-merge.ts`), the re-evaluation scheduler (`scheduler.ts`), what is sent to each
 * connection through its bounded send buffer (`outbox.ts`) and the re-checks of who a
 * connection is (`identity-recheck.ts`). The hub itself handles connections: their
 * messages, one serialisation per update shared by all subscribers, and pings.
 */
const SCOPE_CHANGED = 'What this widget may show you changed: subscribe again.';

export class LiveHub {
  private readonly registry: SubscriptionRegistry;
  private readonly out: Outbox;
  private readonly tails: TailMerge;
  private readonly scheduler: ReevaluationScheduler;
  /** Watched queries whose items a widget places by GeoIP (a map): sent with `geo`. */
  private readonly geoOf = new Set<string>();
  private readonly pinger: NodeJS.Timeout;
  private readonly offRunner: () => void;
  private readonly rechecks: IdentityRechecker;

  constructor(
    private readonly queries: QueriesService,
    private readonly runner: QueryRunner,
    private readonly widgets: WidgetSource | null,
    private readonly opts: LiveHubOptions,
  ) {
    // The last watch of a query gone: no more live re-evaluation or tail for it, and it
    // no longer counts as its owner's live query.
    this.registry = new SubscriptionRegistry((queryId) => {
      runner.unpin(queryId);
      this.geoOf.delete(queryId);
      this.scheduler.forget(queryId);
      this.tails.drop(queryId);
    });
    this.out = new Outbox(this.registry, opts.maxBufferedBytes);
    this.tails = new TailMerge(opts.tailMs, (job) => void this.publish(job));
    this.scheduler = new ReevaluationScheduler(runner, this.registry, {
      refreshMs: opts.refreshMs,
      tailMs: opts.tailMs,
      ...(opts.maxEvaluations !== undefined ? { maxEvaluations: opts.maxEvaluations } : {}),
      ...(opts.busConnected ? { busConnected: opts.busConnected } : {}),
    });
    this.offRunner = runner.onChange((job) => this.publish(job));
    this.pinger = setInterval(() => this.ping(), opts.pingMs).unref();
    this.rechecks = new IdentityRechecker(
      this.registry,
      widgets,
      queries,
      this.out,
      opts.identities,
      opts.recheckMs,
    );
  }

  get connectionCount(): number {
    return this.registry.clients.size;
  }

  /** Counts since start. */
  stats() {
    return { ...this.registry.stats(), ...this.out.counts };
  }

  metrics(): MetricDecl[] {
    return [
      gauge(
        'logscope_live_connections',
        'Open /ws/live-updates connections.',
        () => this.stats().connections,
      ),
      gauge(
        'logscope_live_subscriptions',
        'Subscriptions over all connections.',
        () => this.stats().subscriptions,
      ),
      counter('logscope_live_messages_total', 'Websocket messages sent.', () => this.out.counts.messagesSent),
      counter(
        'logscope_live_slow_clients_closed_total',
        'Clients closed with 1013 for not keeping up.',
        () => this.out.counts.slowClientsClosed,
      ),
    ];
  }

  /** A new authenticated connection, from `address`. */
  attach(socket: WebSocket, who: Identity, address: string | null): void {
    const client: Client = { socket, who, address, watches: [], alive: true };
    this.registry.add(client);
    socket.on('pong', () => {
      client.alive = true;
    });
    socket.on('message', (data, isBinary) => {
      void this.onMessage(client, data as Buffer, isBinary);
    });
    socket.on('close', () => this.registry.remove(client));
    socket.on('error', () => socket.terminate());
  }

  private async onMessage(client: Client, data: Buffer, isBinary: boolean): Promise<void> {
    const msg = decode(data, isBinary, this.opts.maxMessageBytes);
    if ('error' in msg) {
      this.out.error(client, msg.error, msg.command);
      return;
    }
    const { command, params } = msg;
    try {
      switch (command) {
        case 'ping':
          this.out.reply(client, 'pong', {});
          return;
        case 'subscribe':
          await this.subscribe(client, parseTarget(params));
          return;
        case 'unsubscribe': {
          const target = parseTarget(params);
          const key = targetKey(target);
          if (!client.watches.some((w) => w.key === key)) throw badRequest('Not subscribed to that target.');
          this.registry.unsubscribe(client, key);
          this.out.reply(client, 'unsubscribed', { target, subscriptions: this.registry.targets(client) });
          return;
        }
        case 'unsubscribe_all':
          for (const w of client.watches) this.registry.unwatch(client, w);
          client.watches = [];
          this.out.reply(client, 'unsubscribed', { target: null, subscriptions: [] });
          return;
        default:
          this.out.error(
            client,
            `Unknown command "${command}"; use subscribe, unsubscribe, unsubscribe_all or ping.`,
            command,
          );
      }
    } catch (err) {
      // A refused (un)subscription names its target, so a client with several knows which.
      const target = command === 'subscribe' || command === 'unsubscribe' ? targetOrNull(params) : null;
      const detail = this.detailOf(err, 'The command failed because of an internal error.');
      if (target) this.out.reply(client, 'error', { detail, command, target });
      else this.out.error(client, detail, command);
    }
  }

  /** What a client is told of a failure: an AppError's message; anything else is logged, not shown. */
  private detailOf(err: unknown, otherwise: string, context: object = {}): string {
    if (err instanceof AppError) return err.message;
    this.opts.log?.error({ err, ...context }, 'live command or update failed');
    return otherwise;
  }

  private async subscribe(client: Client, target: Target): Promise<void> {
    const key = targetKey(target);
    if (client.watches.some((w) => w.key === key)) {
      this.out.reply(client, 'subscribed', { target, subscriptions: this.registry.targets(client) });
      return;
    }
    let resolved: Array<{
      job: QueryJob;
      widgetId: number | null;
      refreshMs: number | null;
      geo: boolean;
      scopeKey: string | null;
    }>;
    // A dashboard's widgets the caller may not run: each told so once, the others watched.
    let refused: Array<{ widgetId: number; refused: string }> = [];
    if ('query_id' in target) {
      // Read with the caller's rights now (QueriesService.job). A widget's query shared by
      // a read scope is watched under it, as by its widget's subscription: the watch ends
      // when the caller's scope changes (IdentityRechecker).
      const job = await this.queries.job(client.who, target.query_id);
      const scopeKey = job.scopeFixed ? job.scope.key : null;
      resolved = [{ job, widgetId: null, refreshMs: null, geo: false, scopeKey }];
    } else {
      if (!this.widgets) throw badRequest('Widget subscriptions are not available.');
      const origin = { via: 'websocket', address: client.address } as const;
      const widgets = await this.widgets.resolve(client.who, target, origin);
      refused = widgets.filter((r) => 'refused' in r);
      resolved = widgets.flatMap((r) => {
        if ('refused' in r) return [];
        const job = this.runner.peek(r.queryId);
        if (!job) throw notFound("A widget's query ended while subscribing; subscribe again.");
        return [{ ...r, job }];
      });
    }
    // Gone while its queries were looked up: a watch now would never end (nor its pin).
    if (!this.registry.clients.has(client)) return;
    if (client.watches.some((w) => w.key === key)) {
      this.out.reply(client, 'subscribed', { target, subscriptions: this.registry.targets(client) });
      return;
    }
    // Admitted (queryLivePerUser, results memory) and watched in one synchronous step, so
    // simultaneous subscriptions cannot all pass one check; all or none of a dashboard's.
    const pinned: string[] = [];
    try {
      for (const r of resolved) if (this.runner.pin(r.job)) pinned.push(r.job.id);
    } catch (err) {
      for (const id of pinned) this.runner.unpin(id);
      throw err;
    }
    for (const r of resolved) {
      if (r.refreshMs) this.scheduler.setRefresh(r.job.id, r.refreshMs);
      if (r.geo) this.geoOf.add(r.job.id);
    }
    const watches: Watch[] = resolved.map((r) => ({
      key,
      target,
      widgetId: r.widgetId,
      dashboardId: 'dashboard_id' in target ? target.dashboard_id : null,
      queryId: r.job.id,
      scopeKey: r.scopeKey,
    }));
    this.registry.watch(client, watches);
    this.out.reply(client, 'subscribed', { target, subscriptions: this.registry.targets(client) });
    for (const r of refused)
      this.out.reply(client, 'widget-update', {
        widget_id: r.widgetId,
        dashboard_id: 'dashboard_id' in target ? target.dashboard_id : null,
        data: { query_id: null, status: 'ERROR', error: r.refused },
      });
    // The current state of each watched query, then whatever changes. One that cannot be
    // made ends that watch only, with an `error` naming its target.
    for (const w of watches) {
      try {
        // A widget's query may be another viewer's with the same read scope (WidgetQueries).
        const job = w.scopeKey === null ? await this.queries.job(client.who, w.queryId) : this.shared(w);
        const text = this.encodeUpdate(
          w,
          await this.queries.represent(this.tails.withTail(job), this.present(w.queryId)),
        );
        if (typeof text === 'string') this.out.endWatch(client, w, text);
        else this.out.send(client, text);
      } catch (err) {
        const detail = this.detailOf(err, 'Its update could not be made; subscribe again to retry.', {
          queryId: w.queryId,
        });
        this.out.endWatch(client, w, detail);
      }
    }
  }

  /**
   * Re-checks every connection against the metadata store: its token (deleted, expired, user deleted: closed with 4401) and its
   * current rights (widget and dashboard subscriptions it may no longer see end, each
   * named by an `error` message; the connection stays). One pass at a time.
   */
  recheck(): Promise<void> {
    return this.rechecks.recheck();
  }

  /**
   * A query changed: one representation, one message text per (widget, dashboard). Never
   * rejects: it runs from the runner's change listener and the tail timer, where a
   * rejection would end the process. What fails ends the subscriptions of that query only.
   */
  private async publish(job: QueryJob): Promise<void> {
    try {
      await this.publishUpdates(job);
    } catch (err) {
      const detail = this.detailOf(err, 'Its update could not be made; subscribe again to retry.', {
        queryId: job.id,
      });
      for (const { client, watch } of this.registry.watchersOf(job.id))
        this.out.endWatch(client, watch, detail);
    }
  }

  private async publishUpdates(job: QueryJob): Promise<void> {
    const watchers = this.registry.watchersOf(job.id);
    if (!watchers.length) return;
    const data = await this.queries.represent(this.tails.withTail(job), this.present(job.id));
    const texts = new Map<string, Buffer | string>();
    const removed = this.runner.peek(job.id) === undefined;
    for (const { client, watch } of watchers) {
      // A shared widget query whose scope is no longer the viewer's (taken over by another
      // node, which gives it its owner's scope): the viewer subscribes again to its own.
      if (watch.scopeKey !== null && watch.scopeKey !== job.scope.key) {
        this.out.endWatch(client, watch, SCOPE_CHANGED);
        continue;
      }
      const k = `${watch.widgetId}:${watch.dashboardId}`;
      let text = texts.get(k);
      if (text === undefined) {
        text = this.encodeUpdate(watch, data);
        texts.set(k, text);
      }
      if (typeof text === 'string') {
        this.out.endWatch(client, watch, text);
        continue;
      }
      this.out.send(client, text);
      if (removed) this.out.endWatch(client, watch, null);
    }
  }

  /**
   * The update's frame, or why it cannot be sent: larger than `maxUpdateBytes` (a Search
   * page of large events can be hundreds of megabytes, past what a browser or V8's
   * longest string takes; it is not written past the limit).
   */
  private encodeUpdate(watch: Watch, data: GenericQuery): Buffer | string {
    return (
      updateFrame(watch, data, this.opts.maxUpdateBytes) ??
      `Its update is more than the ${this.opts.maxUpdateBytes} bytes an update may be: ask for fewer or smaller results (page_size, fields).`
    );
  }

  /** Rights changed (here or on another node): live connections are re-checked soon. */
  rightsChanged(): void {
    this.rechecks.scheduleRecheck();
  }

  /** A widget watch's shared query, if it still reads what the viewer may read. */
  private shared(w: Watch): QueryJob {
    const job = this.runner.peek(w.queryId);
    if (!job) throw notFound("A widget's query ended while subscribing; subscribe again.");
    if (job.scope.key !== w.scopeKey) throw conflict(SCOPE_CHANGED);
    return job;
  }

  /** Read-time options of a watched query's updates. */
  private present(queryId: string): PresentOptions {
    return this.geoOf.has(queryId) ? { addGeoipData: true } : {};
  }

  /**
   * New events committed on this node. A watched Search in time order or a folding type
   * takes the matching ones in memory (the tail merge; its full re-evaluation waits for
   * the refresh interval); other watched relative queries they could change are
   * re-evaluated, throttled.
   */
  eventsArrived(events: readonly NormalisedEvent[]): void {
    const now = Date.now();
    for (const queryId of this.registry.watched()) {
      const job = this.runner.peek(queryId);
      if (!job || job.stopped || !isRelative(job.params.time_range)) continue;
      const match = this.tails.predicate(job);
      const how = this.tails.tailable(job);
      if (how) {
        this.tails.add(job, how, events, match, now);
        continue;
      }
      if (this.scheduler.isPending(queryId)) continue;
      if (!events.some((e) => match(e as unknown as EventLike))) continue;
      this.scheduler.after(
        queryId,
        job.type === 'Search' ? this.opts.tailMs : this.scheduler.refreshMs(queryId),
        now,
      );
    }
  }

  /** Another node committed events (a summary): see ReevaluationScheduler.committedElsewhere. */
  committedElsewhere(commit: { count: number; fromMs: number; toMs: number }): void {
    this.scheduler.committedElsewhere(commit);
  }

  private ping() {
    // Watched queries stay in use for every node's TTL sweep.
    this.queries.watched([...this.registry.watched()]).catch(() => undefined);
    for (const c of this.registry.clients) {
      if (!c.alive) {
        c.socket.terminate();
        this.registry.remove(c);
        continue;
      }
      c.alive = false;
      c.socket.ping();
    }
  }

  close(): void {
    clearInterval(this.pinger);
    this.rechecks.close();
    this.scheduler.close();
    this.tails.close();
    this.offRunner();
    // terminate, not close: a stalled client would hold a closing handshake open forever.
    for (const c of this.registry.clients) c.socket.terminate();
  }
}
