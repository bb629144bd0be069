/** Dashboards and their widgets, with the built-in templates. */

import {
  DashboardExportSchema,
  DashboardSchema,
  WidgetExportSchema,
  WidgetSchema,
} from '../domain/dashboards/dashboard-schema.js';
import { DashboardsService } from '../domain/dashboards/dashboards-service.js';
import { WidgetsService } from '../domain/dashboards/widgets-service.js';
import { dashboardRoutes } from '../http/routes/dashboards.js';
import { widgetRoutes } from '../http/routes/widgets.js';
import { DashboardRepositories } from '../metadata/dashboards-repository.js';
import { component } from './component.js';

declare module './component.js' {
  interface Services {
    dashboards: DashboardsService;
    widgets: WidgetsService;
  }
}

export const dashboards = component({
  name: 'dashboards',
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
