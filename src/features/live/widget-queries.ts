import { createHash } from 'node:crypto';
import type { Identity } from '../../core/identity.js';
import { AppError } from '../../errors/errors.js';
import type { ReadAudit, ReadOrigin } from '../../query/read-audit.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { QueryRunner } from '../../query/runner.js';
import type { DashboardsService } from '../dashboards/dashboards-service.js';
import type { QueriesService } from '../queries/queries-service.js';
import type { WidgetSource } from './live-hub.js';
import type { RefusedWidget, ResolvedWidget } from './sources.js';

/**
 * Widget and dashboard subscriptions run their widgets' queries. One query per (read
 * scope, widget, definition) is started, as a query of the first viewer, and reused: the
 * viewers who may read the same events (ADR 0013) share one computation, so 500 viewers
 * in 5 reader sets cost 5 queries, not 500, and an edited widget gets a fresh query. The
 * query keeps the scope it was started for when its first viewer's rights change (the
 * other viewers keep it); a viewer whose scope changed subscribes again to its new one.
 * Each viewer's read is recorded: the first's as the `query.create` that starts the
 * query, each other's as a `query.read` of the shared one (`shared: true`).
 */
export class WidgetQueries implements WidgetSource {
  /** The query started for a key; a promise, so simultaneous subscriptions share one start. */
  private readonly started = new Map<string, Promise<string>>();

  constructor(
    private readonly dashboards: DashboardsService,
    private readonly queries: QueriesService,
    private readonly runner: QueryRunner,
    private readonly scopes: ReadScopes,
    private readonly audit: ReadAudit,
  ) {}

  async scopeKey(who: Identity): Promise<string> {
    return (await this.scopes.of(who)).key;
  }

  /** A widget target's one widget is never `refused`: its refusal is thrown. */
  resolve(who: Identity, target: { widget_id: number }, origin: ReadOrigin): Promise<ResolvedWidget[]>;
  resolve(
    who: Identity,
    target: { widget_id: number } | { dashboard_id: number },
    origin: ReadOrigin,
  ): Promise<Array<ResolvedWidget | RefusedWidget>>;
  async resolve(
    who: Identity,
    target: { widget_id: number } | { dashboard_id: number },
    origin: ReadOrigin,
  ): Promise<Array<ResolvedWidget | RefusedWidget>> {
    const widgets = await this.dashboards.liveWidgets(who, target);
    const scopeKey = await this.scopeKey(who);
    return Promise.all(
      widgets.map(async (w) => {
        const hash = createHash('sha1').update(JSON.stringify(w.query)).digest('hex');
        const key = `${scopeKey}:${w.widgetId}:${hash}`;
        const detail = { widget_id: w.widgetId };
        const valid = this.queries.validate(w.query);
        // Each viewer's own rights on what the query reads beyond its scope (a Metric
        // query's metric), also when the query is shared, begun by another viewer. On a
        // dashboard the refusal is that widget's only.
        try {
          await this.queries.checkMetric(who, valid, true);
        } catch (err) {
          if ('dashboard_id' in target && err instanceof AppError && err.status === 400)
            return { widgetId: w.widgetId, refused: err.message };
          throw err;
        }
        const { queryId, started } = await this.queryFor(key, scopeKey, () =>
          this.queries.start(who, valid, { scopeFixed: true, origin, detail }),
        );
        if (!started)
          this.audit.read({
            who,
            origin,
            action: 'query.read',
            target: { kind: 'query', id: queryId },
            detail: { ...detail, shared: true },
            outcome: 'ok',
          });
        return { widgetId: w.widgetId, queryId, refreshMs: w.refreshMs, geo: w.geo, scopeKey };
      }),
    );
  }

  async visible(who: Identity, target: { widget_id: number } | { dashboard_id: number }) {
    try {
      await this.dashboards.liveWidgets(who, target);
      return true;
    } catch (err) {
      if (err instanceof AppError && err.status === 404) return false;
      throw err;
    }
  }

  /**
   * The running query for `key`, started once: the check and the start happen with no
   * await between them, so simultaneous subscriptions share one query. `started`: this
   * call started it (the others share it).
   */
  private async queryFor(
    key: string,
    scopeKey: string,
    start: () => Promise<{ id: string }>,
  ): Promise<{ queryId: string; started: boolean }> {
    const existing = this.started.get(key);
    if (existing) {
      const id = await existing.catch(() => undefined);
      // Still there, and still reading what this key's viewers may read.
      if (id && this.runner.peek(id)?.scope.key === scopeKey) return { queryId: id, started: false };
      // Another subscription may have restarted it while this one waited.
      if (this.started.get(key) !== existing) return this.queryFor(key, scopeKey, start);
    }
    const starting = start().then((job) => job.id);
    this.started.set(key, starting);
    starting.catch(() => {
      if (this.started.get(key) === starting) this.started.delete(key);
    });
    return { queryId: await starting, started: true };
  }
}
