/** Dashboards and their widgets, with the built-in templates. */

import { component } from '../component.js';
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
  build({ meta }) {
    const repos = new DashboardRepositories(meta.db);
    const dashboards = new DashboardsService(repos);
    const widgets = new WidgetsService(repos);
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
