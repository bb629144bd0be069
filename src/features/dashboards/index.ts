/** Dashboards and their widgets, with the built-in templates. */

import { component } from '../component.js';
import type { WidgetQueryCheck } from './dashboard-model.js';
import {
  DashboardExportSchema,
  DashboardSchema,
  WidgetExportSchema,
  WidgetSchema,
} from './dashboard-schema.js';
import { DashboardRepositories } from './dashboards-repository.js';
import { dashboardRoutes } from './dashboards-routes.js';
import { DashboardsService } from './dashboards-service.js';
import { dashboardsMigration } from './dashboards-table.js';
import { widgetRoutes } from './widgets-routes.js';
import { WidgetsService } from './widgets-service.js';

declare module '../component.js' {
  interface Services {
    dashboards: DashboardsService;
    widgets: WidgetsService;
  }
}

export const dashboards = component({
  name: 'dashboards',
  migrations: { '0004-dashboards': dashboardsMigration },
  build({ meta }, { queries }) {
    const repos = new DashboardRepositories(meta.db);
    // A widget's query is saved only on what its owner may read (a Metric query's metric).
    const queryCheck: WidgetQueryCheck = (who, query) =>
      queries.checkMetric(who, queries.validate(query), false);
    const dashboards = new DashboardsService(repos, undefined, queryCheck);
    const widgets = new WidgetsService(repos, undefined, queryCheck);
    return {
      provides: { dashboards, widgets },
      schemas: [WidgetSchema, WidgetExportSchema, DashboardSchema, DashboardExportSchema],
      async routes(app) {
        await app.register(dashboardRoutes, { dashboards });
        await app.register(widgetRoutes, { widgets });
      },
    };
  },
});
