import { createHash } from 'node:crypto';
import type { Identity } from '../domain/auth/identity.js';
import type { DashboardsService } from '../domain/dashboards/dashboards-service.js';
import type { QueriesService } from '../domain/queries/queries-service.js';
import { AppError } from '../errors/errors.js';
import type { QueryRunner } from '../query/runner.js';
import type { WidgetSource } from './live-hub.js';

/**
 * Widget and dashboard subscriptions run their widgets' queries as queries of the
 * subscriber. One query per (subscriber, widget, definition) is started and reused, so
 * many tabs on one dashboard share the work, and an edited widget gets a fresh query.
 */
export class WidgetQueries implements WidgetSource {
  /** The query started for a key; a promise, so simultaneous subscriptions share one start. */
  private readonly started = new Map<string, Promise<string>>();

  constructor(
    private readonly dashboards: DashboardsService,
    private readonly queries: QueriesService,
    private readonly runner: QueryRunner,
  ) {}

  async resolve(who: Identity, target: { widget_id: number } | { dashboard_id: number }) {
    const widgets = await this.dashboards.liveWidgets(who, target);
    return Promise.all(
      widgets.map(async (w) => {
        const hash = createHash('sha1').update(JSON.stringify(w.query)).digest('hex');
        const key = `${who.userId}:${w.widgetId}:${hash}`;
        const queryId = await this.queryFor(key, () =>
          this.queries.start(who, this.queries.validate(w.query)),
        );
        return { widgetId: w.widgetId, queryId, refreshMs: w.refreshMs, geo: w.geo };
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
   * await between them, so simultaneous subscriptions share one query.
   */
  private async queryFor(key: string, start: () => Promise<{ id: string }>): Promise<string> {
    const existing = this.started.get(key);
    if (existing) {
      const id = await existing.catch(() => undefined);
      if (id && this.runner.peek(id)) return id;
      // Another subscription may have restarted it while this one waited.
      if (this.started.get(key) !== existing) return this.queryFor(key, start);
    }
    const starting = start().then((job) => job.id);
    this.started.set(key, starting);
    starting.catch(() => {
      if (this.started.get(key) === starting) this.started.delete(key);
    });
    return starting;
  }
}
