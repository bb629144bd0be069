import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { type FieldErrors, notFound, permissionDenied, validationError } from '../../errors/errors.js';
import {
  canSeeWidget,
  checkWidgetAccess,
  checkWidgetQuery,
  isReadOnly,
  presentWidgets,
  seesAllWidgets,
  visualizationOf,
  type Widget,
  type WidgetDefinition,
  type WidgetInput,
  type WidgetQueryCheck,
  widgetColumns,
  widgetDefinition,
} from './dashboard-model.js';
import type { DashboardRepositories } from './dashboards-repository.js';
import type { WidgetRow } from './dashboards-table.js';
import { checkVisualization } from './metric-widgets.js';

/** Widgets: they are created on a dashboard (DashboardsService.addWidget). */
export class WidgetsService {
  constructor(
    private readonly repos: DashboardRepositories,
    private readonly now: () => Date = () => new Date(),
    /** A changed query checked against the widget's owner (a Metric query's metric). */
    private readonly queryCheck?: WidgetQueryCheck,
  ) {}

  /** The caller's widgets; everyone's with `showAll` for holders of manage_widgets. */
  async list(
    who: Identity,
    opts: { showAll: boolean; title?: string | undefined },
    page: PageRequest,
  ): Promise<Page<Widget>> {
    const all = opts.showAll && seesAllWidgets(who);
    const res = await this.repos.widgets.list(
      { ...(all ? {} : { ownerId: who.userId }), ...(opts.title !== undefined ? { title: opts.title } : {}) },
      page,
    );
    return { count: res.count, rows: await presentWidgets(who, res.rows, this.repos) };
  }

  async export(
    who: Identity,
    opts: { showAll: boolean; title?: string | undefined },
    page: PageRequest,
  ): Promise<Page<WidgetDefinition>> {
    const all = opts.showAll && seesAllWidgets(who);
    const res = await this.repos.widgets.list(
      { ...(all ? {} : { ownerId: who.userId }), ...(opts.title !== undefined ? { title: opts.title } : {}) },
      page,
    );
    return { count: res.count, rows: res.rows.map(widgetDefinition) };
  }

  async get(who: Identity, id: number): Promise<Widget> {
    const [widget] = await presentWidgets(who, [await this.visible(who, id)], this.repos);
    return widget!;
  }

  async exportOne(who: Identity, id: number): Promise<WidgetDefinition> {
    return widgetDefinition(await this.visible(who, id));
  }

  /**
   * PUT (`partial` false: title and query required) or PATCH. Fields left out keep their
   * values; a given `query` is validated and replaces the old one whole.
   */
  async update(who: Identity, id: number, input: WidgetInput, partial: boolean): Promise<Widget> {
    const row = await this.writable(who, id);
    const current = widgetDefinition(row);
    if (!partial) {
      const missing: FieldErrors = {};
      if (input.title === undefined) missing.title = ['This field is required.'];
      if (input.query === undefined) missing.query = ['This field is required.'];
      if (Object.keys(missing).length) throw validationError(missing);
    }
    const next: WidgetDefinition = {
      title: input.title ?? current.title,
      description: input.description ?? current.description,
      query: input.query ? checkWidgetQuery(input.query, 'query') : current.query,
      visualization: input.visualization ? visualizationOf(input.visualization) : current.visualization,
      position: input.position ?? current.position,
      refresh_interval:
        input.refresh_interval !== undefined ? input.refresh_interval : current.refresh_interval,
    };
    checkVisualization(next.query, next.visualization, '');
    if (input.query) await checkWidgetAccess(this.queryCheck, who, next.query, 'query');
    const updated = await this.repos.widgets.update(id, {
      ...widgetColumns(next),
      updated_at: this.now().toISOString(),
    });
    if (!updated) throw notFound('No such widget.');
    const [widget] = await presentWidgets(who, [updated], this.repos);
    return widget!;
  }

  /** Deletes a widget from every dashboard it is on. */
  async delete(who: Identity, id: number): Promise<void> {
    await this.writable(who, id);
    await this.repos.widgets.deleteMany([id]);
  }

  /** The widget if the caller may see it (for reads and subscriptions), else 404. */
  async visible(who: Identity, id: number): Promise<WidgetRow> {
    const row = await this.repos.widgets.byId(id);
    if (!row || !(await canSeeWidget(who, row, this.repos))) throw notFound('No such widget.');
    return row;
  }

  private async writable(who: Identity, id: number): Promise<WidgetRow> {
    const row = await this.visible(who, id);
    if (isReadOnly(who, row)) throw permissionDenied('This widget is read-only for you: you do not own it.');
    return row;
  }
}
