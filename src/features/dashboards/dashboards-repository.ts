import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { OrderTerm, Page, PageRequest } from '../../core/list.js';
import { inChunks } from '../../metadata/chunks.js';
import { paginate } from '../../metadata/paginate.js';
import type { Database } from '../../metadata/schema.js';
import type { DashboardRow, DashboardUpdate, NewDashboardRow } from './dashboards-table.js';
import { DashboardTemplatesRepository } from './templates-repository.js';
import { WidgetsRepository } from './widgets-repository.js';

export interface DashboardFilter {
  /** Restrict to this owner (the caller); undefined = everyone's. */
  visibleTo?: number;
  /** The `owner` filter: any of these owners. */
  owners?: number[];
  /** Exact title. */
  title?: string;
  /**
   * Keeps the titles it answers true for (one answer per title, in order). Evaluated in
   * the application, so the regex dialect is the same on every metadata backend.
   */
  titleMatches?: (titles: string[]) => boolean[];
}

export interface Attachment {
  dashboard_id: number;
  widget_id: number;
  layout: number;
}

/** `owner` in a representation is the `owner_id` column. */
const columnOf = (term: OrderTerm): OrderTerm =>
  term.field === 'owner' ? { ...term, field: 'owner_id' } : term;

/** Dashboards and which widgets sit on them, in layout order. */
export class DashboardsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  byId(id: number): Promise<DashboardRow | undefined> {
    return this.db.selectFrom('dashboards').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async list(filter: DashboardFilter, page: PageRequest): Promise<Page<DashboardRow>> {
    let q = this.db.selectFrom('dashboards').selectAll();
    if (filter.visibleTo !== undefined) q = q.where('owner_id', '=', filter.visibleTo);
    if (filter.owners) q = q.where('owner_id', 'in', filter.owners);
    if (filter.title !== undefined) q = q.where('title', '=', filter.title);
    const ordered = { ...page, ordering: page.ordering.map(columnOf) };
    if (!filter.titleMatches) return paginate(q, ordered);
    // The predicate runs here, so the page is cut from the filtered rows in memory.
    const all = await orderedRows(q, ordered.ordering);
    const keep = filter.titleMatches(all.map((r) => r.title));
    const rows = all.filter((_, i) => keep[i]);
    return { count: rows.length, rows: rows.slice(page.offset, page.offset + page.limit) };
  }

  insert(row: NewDashboardRow): Promise<DashboardRow> {
    return this.db.insertInto('dashboards').values(row).returningAll().executeTakeFirstOrThrow();
  }

  update(id: number, patch: DashboardUpdate): Promise<DashboardRow | undefined> {
    return this.db
      .updateTable('dashboards')
      .set(patch)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
  }

  async delete(id: number): Promise<boolean> {
    const res = await this.db.deleteFrom('dashboards').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Widget ids on a dashboard, in layout order. */
  async widgetIdsOf(dashboardId: number): Promise<number[]> {
    const rows = await this.db
      .selectFrom('dashboard_widgets')
      .select('widget_id')
      .where('dashboard_id', '=', dashboardId)
      .orderBy('layout')
      .orderBy('widget_id')
      .execute();
    return rows.map((r) => r.widget_id);
  }

  /** The attachments of these dashboards, each dashboard's in layout order. */
  attachmentsOf(dashboardIds: number[]): Promise<Attachment[]> {
    const sorted = [...dashboardIds].sort((a, b) => a - b);
    return inChunks(sorted, (slice) =>
      this.db
        .selectFrom('dashboard_widgets')
        .selectAll()
        .where('dashboard_id', 'in', slice)
        .orderBy('dashboard_id')
        .orderBy('layout')
        .orderBy('widget_id')
        .execute(),
    );
  }

  /**
   * The dashboards these widgets are on, restricted to dashboards of `visibleTo` when
   * given, as (widget_id, dashboard_id) pairs ordered by dashboard id.
   */
  dashboardsOfWidgets(
    widgetIds: number[],
    visibleTo: number | undefined,
  ): Promise<Array<{ widget_id: number; dashboard_id: number }>> {
    return inChunks(widgetIds, (slice) => {
      let q = this.db
        .selectFrom('dashboard_widgets')
        .innerJoin('dashboards', 'dashboards.id', 'dashboard_widgets.dashboard_id')
        .select(['dashboard_widgets.widget_id', 'dashboard_widgets.dashboard_id'])
        .where('dashboard_widgets.widget_id', 'in', slice);
      if (visibleTo !== undefined) q = q.where('dashboards.owner_id', '=', visibleTo);
      return q.orderBy('dashboard_widgets.dashboard_id').execute();
    });
  }

  /** Replaces a dashboard's widgets by these, in this order. */
  async setLayout(dashboardId: number, widgetIds: number[]): Promise<void> {
    await this.db.deleteFrom('dashboard_widgets').where('dashboard_id', '=', dashboardId).execute();
    if (!widgetIds.length) return;
    await this.db
      .insertInto('dashboard_widgets')
      .values(widgetIds.map((widget_id, layout) => ({ dashboard_id: dashboardId, widget_id, layout })))
      .execute();
  }

  /** Puts a widget last on a dashboard. */
  async append(dashboardId: number, widgetId: number): Promise<void> {
    const last = await this.db
      .selectFrom('dashboard_widgets')
      .select((eb) => eb.fn.max('layout').as('layout'))
      .where('dashboard_id', '=', dashboardId)
      .executeTakeFirst();
    const layout = last?.layout === null || last?.layout === undefined ? 0 : Number(last.layout) + 1;
    await this.db
      .insertInto('dashboard_widgets')
      .values({ dashboard_id: dashboardId, widget_id: widgetId, layout })
      .execute();
  }

  async detach(dashboardId: number, widgetIds: number[]): Promise<void> {
    if (!widgetIds.length) return;
    await this.db
      .deleteFrom('dashboard_widgets')
      .where('dashboard_id', '=', dashboardId)
      .where('widget_id', 'in', widgetIds)
      .execute();
  }

  /** Those of these widgets that are on no dashboard. */
  async unattached(widgetIds: number[]): Promise<number[]> {
    if (!widgetIds.length) return [];
    const rows = await this.db
      .selectFrom('dashboard_widgets')
      .select('widget_id')
      .distinct()
      .where('widget_id', 'in', widgetIds)
      .execute();
    const attached = new Set(rows.map((r) => r.widget_id));
    return [...new Set(widgetIds)].filter((id) => !attached.has(id));
  }
}

/** Every row of a filtered select in the requested order (ties by id, as `paginate`). */
async function orderedRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  ordering: OrderTerm[],
): Promise<O[]> {
  let q = query;
  for (const term of ordering) q = q.orderBy(sql.ref(term.field), term.desc ? 'desc' : 'asc');
  if (!ordering.some((t) => t.field === 'id')) q = q.orderBy(sql.ref('id'), 'asc');
  return q.execute();
}

/**
 * The repositories dashboards, widgets and templates are written through, bound to one
 * connection or transaction: several rows written together are written in `transaction`
 * so that a failure leaves nothing half-made.
 */
export class DashboardRepositories {
  readonly dashboards: DashboardsRepository;
  readonly widgets: WidgetsRepository;
  readonly templates: DashboardTemplatesRepository;

  constructor(private readonly db: Kysely<Database>) {
    this.dashboards = new DashboardsRepository(db);
    this.widgets = new WidgetsRepository(db);
    this.templates = new DashboardTemplatesRepository(db);
  }

  /** Runs `fn` in one transaction; `fn` must use only the repositories it is given. */
  transaction<T>(fn: (repos: DashboardRepositories) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => fn(new DashboardRepositories(trx)));
  }
}
