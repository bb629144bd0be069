/**
 * Dashboards and widgets: representations, the portable (export) form, the
 * visibility rules, and how a widget definition from a body becomes stored values.
 */

import { can, type Identity } from '../../core/identity.js';
import { AppError, type FieldErrors, fieldError, validationError } from '../../errors/errors.js';
import { validateQuery } from '../../query/validate.js';
import type { VISUALIZATION_KINDS } from './dashboard-schema.js';
import type { DashboardRepositories } from './dashboards-repository.js';
import type { DashboardRow, WidgetRow } from './dashboards-table.js';
import { checkVisualization } from './metric-widgets.js';

export type VisualizationKind = (typeof VISUALIZATION_KINDS)[number];

export interface WidgetQuery {
  type: string;
  params: Record<string, unknown>;
}
export interface Visualization {
  kind: VisualizationKind;
  options: Record<string, unknown>;
}
export interface Position {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The portable widget: what `export=true` shows and a body may carry. */
export interface WidgetDefinition {
  title: string;
  description: string;
  query: WidgetQuery;
  visualization: Visualization;
  position: Position;
  refresh_interval: number | null;
}

export interface Widget extends WidgetDefinition {
  id: number;
  owner: number;
  read_only: boolean;
  /** The dashboards it is on that the caller can see. */
  dashboards: number[];
  created_at: string;
  updated_at: string;
}

/** The portable dashboard: widgets inline, no ids, owner or timestamps. */
export interface DashboardDefinition {
  title: string;
  description: string;
  widgets: WidgetDefinition[];
}

export interface Dashboard {
  id: number;
  title: string;
  description: string;
  owner: number;
  widgets: Widget[];
  created_at: string;
  updated_at: string;
}

/** A widget as a body gives it; which fields are required depends on the operation. */
export interface WidgetInput {
  title?: string | undefined;
  description?: string | undefined;
  query?: { type: string; params?: object | undefined } | undefined;
  visualization?: { kind: VisualizationKind; options?: object | undefined } | undefined;
  position?: Position | undefined;
  refresh_interval?: number | null | undefined;
}

export const DEFAULT_VISUALIZATION: Visualization = { kind: 'table', options: {} };
export const DEFAULT_SIZE = { w: 6, h: 4 };

// Visibility: your own objects, everyone's for holders of the permission.
export const seesAllDashboards = (who: Identity) => can(who, 'manage_dashboards');
export const seesAllWidgets = (who: Identity) => can(who, 'manage_widgets');

/** Owner restriction for dashboard reads: undefined when the caller sees them all. */
export const dashboardScope = (who: Identity): number | undefined =>
  seesAllDashboards(who) ? undefined : who.userId;

export const canSeeDashboard = (who: Identity, row: DashboardRow) =>
  row.owner_id === who.userId || seesAllDashboards(who);

/** A widget is read-only to everyone but its owner. */
export const isReadOnly = (who: Identity, row: WidgetRow) => row.owner_id !== who.userId;

/**
 * A widget is visible to its owner, to holders of manage_widgets, and to anyone who can
 * see a dashboard it is on (read-only, unless they own it).
 */
export async function canSeeWidget(who: Identity, row: WidgetRow, repos: DashboardRepositories) {
  if (row.owner_id === who.userId || seesAllWidgets(who)) return true;
  const on = await repos.dashboards.dashboardsOfWidgets([row.id], dashboardScope(who));
  return on.length > 0;
}

export function widgetDefinition(row: WidgetRow): WidgetDefinition {
  return {
    title: row.title,
    description: row.description,
    query: JSON.parse(row.query) as WidgetQuery,
    visualization: JSON.parse(row.visualization) as Visualization,
    position: JSON.parse(row.position) as Position,
    refresh_interval: row.refresh_interval,
  };
}

/** Widget representations for the caller, in the order of `rows`. */
export async function presentWidgets(
  who: Identity,
  rows: WidgetRow[],
  repos: DashboardRepositories,
): Promise<Widget[]> {
  const pairs = await repos.dashboards.dashboardsOfWidgets(
    [...new Set(rows.map((r) => r.id))],
    dashboardScope(who),
  );
  const on = new Map<number, number[]>();
  for (const p of pairs) on.set(p.widget_id, [...(on.get(p.widget_id) ?? []), p.dashboard_id]);
  return rows.map((row) => ({
    id: row.id,
    ...widgetDefinition(row),
    owner: row.owner_id,
    read_only: isReadOnly(who, row),
    dashboards: on.get(row.id) ?? [],
    created_at: row.created_at,
    updated_at: row.updated_at,
  }));
}

/** The widget rows on each dashboard, in layout order. */
export async function widgetRowsOf(
  dashboardIds: number[],
  repos: DashboardRepositories,
): Promise<Map<number, WidgetRow[]>> {
  const links = await repos.dashboards.attachmentsOf(dashboardIds);
  const rows = new Map(
    (await repos.widgets.byIds([...new Set(links.map((l) => l.widget_id))])).map((r) => [r.id, r]),
  );
  const out = new Map<number, WidgetRow[]>(dashboardIds.map((id) => [id, []]));
  for (const l of links) {
    const row = rows.get(l.widget_id);
    if (row) out.get(l.dashboard_id)?.push(row);
  }
  return out;
}

export async function presentDashboards(
  who: Identity,
  rows: DashboardRow[],
  repos: DashboardRepositories,
): Promise<Dashboard[]> {
  const widgetRows = await widgetRowsOf(
    rows.map((r) => r.id),
    repos,
  );
  const all = [...widgetRows.values()].flat();
  const widgets = new Map((await presentWidgets(who, all, repos)).map((w) => [w.id, w]));
  return rows.map((row) => ({
    id: row.id,
    title: row.title,
    description: row.description,
    owner: row.owner_id,
    widgets: (widgetRows.get(row.id) ?? []).map((w) => widgets.get(w.id)!),
    created_at: row.created_at,
    updated_at: row.updated_at,
  }));
}

export async function exportDashboards(
  rows: DashboardRow[],
  repos: DashboardRepositories,
): Promise<DashboardDefinition[]> {
  const widgetRows = await widgetRowsOf(
    rows.map((r) => r.id),
    repos,
  );
  return rows.map((row) => ({
    title: row.title,
    description: row.description,
    widgets: (widgetRows.get(row.id) ?? []).map(widgetDefinition),
  }));
}

/** Re-keys a validation error under `prefix` (`query.params.n`, `widgets.2.query.type`). */
function prefixed(error: unknown, prefix: string): unknown {
  if (!(error instanceof AppError) || error.status !== 400) return error;
  const errors: FieldErrors = {};
  for (const [key, messages] of Object.entries(error.errors ?? { '': [error.message] })) {
    errors[key ? `${prefix}.${key}` : prefix] = messages;
  }
  return new AppError(400, error.code, `${prefix}: ${error.message}`, errors);
}

/**
 * What checks a widget's query against the user who saves it beyond its params (a Metric
 * query's metric must be one they may see: a 400 on `params.metric_id`); wired to
 * QueriesService.checkMetric where the app is put together.
 */
export type WidgetQueryCheck = (who: Identity, query: WidgetQuery) => Promise<void>;

/** `check` on a widget's query, its errors under `path` (`widgets.2.query.params.metric_id`). */
export async function checkWidgetAccess(
  check: WidgetQueryCheck | undefined,
  who: Identity,
  query: WidgetQuery,
  path: string,
): Promise<void> {
  try {
    await check?.(who, query);
  } catch (error) {
    throw prefixed(error, path);
  }
}

/** Validates a widget query and returns it with the defaults of its type filled in. */
export function checkWidgetQuery(query: NonNullable<WidgetInput['query']>, path: string): WidgetQuery {
  try {
    const valid = validateQuery({ type: query.type, params: query.params ?? {} });
    return { type: valid.type, params: valid.params as unknown as Record<string, unknown> };
  } catch (error) {
    throw prefixed(error, path);
  }
}

/**
 * A complete widget definition from a body: `title` and `query` are required, the
 * query is validated, the rest defaults (a new widget goes below `bottom`).
 */
export function completeWidget(input: WidgetInput, path: string, bottom: number): WidgetDefinition {
  const at = (field: string) => (path ? `${path}.${field}` : field);
  const missing: FieldErrors = {};
  if (input.title === undefined) missing[at('title')] = ['This field is required.'];
  if (input.query === undefined) missing[at('query')] = ['This field is required.'];
  if (Object.keys(missing).length) throw validationError(missing);
  const query = checkWidgetQuery(input.query!, at('query'));
  const visualization = input.visualization ? visualizationOf(input.visualization) : DEFAULT_VISUALIZATION;
  checkVisualization(query, visualization, path);
  return {
    title: input.title!,
    description: input.description ?? '',
    query,
    visualization,
    position: input.position ?? { x: 0, y: bottom, ...DEFAULT_SIZE },
    refresh_interval: input.refresh_interval ?? null,
  };
}

export const visualizationOf = (v: NonNullable<WidgetInput['visualization']>): Visualization => ({
  kind: v.kind,
  options: (v.options ?? {}) as Record<string, unknown>,
});

/** The lowest edge of these widgets: where the next default position starts. */
export const bottomOf = (positions: Position[]) => positions.reduce((m, p) => Math.max(m, p.y + p.h), 0);

/** Stored columns of a widget definition. */
export const widgetColumns = (def: WidgetDefinition) => ({
  title: def.title,
  description: def.description,
  query: JSON.stringify(def.query),
  visualization: JSON.stringify(def.visualization),
  position: JSON.stringify(def.position),
  refresh_interval: def.refresh_interval,
});

export const requireUnique = (ids: number[], field: string) => {
  if (new Set(ids).size !== ids.length) throw fieldError(field, 'A widget may appear only once.');
};
