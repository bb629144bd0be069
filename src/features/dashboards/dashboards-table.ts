import type { Generated, Insertable, Kysely, Migration, Selectable, Updateable } from 'kysely';
import type { MetadataDialect } from '../../metadata/database.js';
import { idColumn } from '../../metadata/migrations/helpers.js';

export interface DashboardsTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  created_at: string;
  updated_at: string;
}

export interface WidgetsTable {
  id: Generated<number>;
  title: string;
  description: string;
  owner_id: number;
  /** JSON `{type, params}`, params with defaults filled in. */
  query: string;
  /** JSON `{kind, options}`. */
  visualization: string;
  /** JSON `{x, y, w, h}`. */
  position: string;
  refresh_interval: number | null;
  created_at: string;
  updated_at: string;
}

export interface DashboardWidgetsTable {
  dashboard_id: number;
  widget_id: number;
  /** Place of the widget in the dashboard's layout order (0-based). */
  layout: number;
}

export interface DashboardTemplatesTable {
  path: string;
  /** Null once the saving user is deleted. */
  owner_id: number | null;
  /** JSON of the portable dashboard (title, description, widgets). */
  definition: string;
  created_at: string;
}

declare module '../../metadata/schema.js' {
  interface Database {
    dashboards: DashboardsTable;
    widgets: WidgetsTable;
    dashboard_widgets: DashboardWidgetsTable;
    dashboard_templates: DashboardTemplatesTable;
  }
}

export type DashboardRow = Selectable<DashboardsTable>;
export type NewDashboardRow = Insertable<DashboardsTable>;
export type DashboardUpdate = Updateable<DashboardsTable>;
export type WidgetRow = Selectable<WidgetsTable>;
export type NewWidgetRow = Insertable<WidgetsTable>;
export type WidgetUpdate = Updateable<WidgetsTable>;
export type TemplateRow = Selectable<DashboardTemplatesTable>;

/**
 * Dashboards, widgets, which widget sits on which dashboard (in layout order), and saved
 * dashboard templates. Nested values (a widget's query, visualization and position, a
 * template's definition) are JSON text, as `queries.params` is: both dialects store and
 * compare them alike, and nothing filters on their insides.
 */
export const dashboardsMigration = (dialect: MetadataDialect): Migration => ({
  async up(db: Kysely<unknown>) {
    await idColumn(db.schema.createTable('dashboards'), dialect)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dashboards_owner').on('dashboards').column('owner_id').execute();

    await idColumn(db.schema.createTable('widgets'), dialect)
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('query', 'text', (c) => c.notNull())
      .addColumn('visualization', 'text', (c) => c.notNull())
      .addColumn('position', 'text', (c) => c.notNull())
      .addColumn('refresh_interval', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('widgets_owner').on('widgets').column('owner_id').execute();

    await db.schema
      .createTable('dashboard_widgets')
      .addColumn('dashboard_id', 'integer', (c) =>
        c.notNull().references('dashboards.id').onDelete('cascade'),
      )
      .addColumn('widget_id', 'integer', (c) => c.notNull().references('widgets.id').onDelete('cascade'))
      .addColumn('layout', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('dashboard_widgets_pk', ['dashboard_id', 'widget_id'])
      .execute();
    await db.schema
      .createIndex('dashboard_widgets_widget')
      .on('dashboard_widgets')
      .column('widget_id')
      .execute();

    await db.schema
      .createTable('dashboard_templates')
      .addColumn('path', 'text', (c) => c.primaryKey())
      .addColumn('owner_id', 'integer', (c) => c.references('users.id').onDelete('set null'))
      .addColumn('definition', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('dashboard_templates').execute();
    await db.schema.dropTable('dashboard_widgets').execute();
    await db.schema.dropTable('widgets').execute();
    await db.schema.dropTable('dashboards').execute();
  },
});
