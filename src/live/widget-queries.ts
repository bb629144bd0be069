import { createHash } from 'node:crypto';
import type { Identity } from '../domain/auth/identity.js';
import type { DashboardsService } from '../domain/dashboards/dashboards-service.js';
import type { QueriesService } from '../domain/queries/queries-service.js';
import type { QueryRunner } from '../query/runner.js';
import type { WidgetSource } from './live-hub.js';

/**
 * Widget and dashboard subscriptions run their widgets' queries as queries of the
 * subscriber. One query per (subscriber, widget, definition) is started and reused, so
 * many tabs on one dashboard share the work, and an edited widget gets a fresh query.
 */
export class WidgetQueries implements WidgetSource {
  private readonly started = new Map<string, string>();

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
        let queryId = this.started.get(key);
        if (!queryId || !this.runner.peek(queryId)) {
          queryId = (await this.queries.start(who, this.queries.validate(w.query))).id;
          this.started.set(key, queryId);
        }
        return { widgetId: w.widgetId, queryId, refreshMs: w.refreshMs };
      }),
    );
  }
}
