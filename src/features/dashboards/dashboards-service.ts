import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import {
  conflict,
  type FieldErrors,
  fieldError,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import { BUILTIN_TEMPLATES } from './builtin-templates.js';
import {
  bottomOf,
  canSeeDashboard,
  canSeeWidget,
  checkWidgetAccess,
  completeWidget,
  type Dashboard,
  type DashboardDefinition,
  dashboardScope,
  exportDashboards,
  presentDashboards,
  presentWidgets,
  requireUnique,
  seesAllDashboards,
  seesAllWidgets,
  type Widget,
  type WidgetDefinition,
  type WidgetInput,
  type WidgetQuery,
  type WidgetQueryCheck,
  widgetColumns,
  widgetDefinition,
  widgetRowsOf,
} from './dashboard-model.js';
import { MAX_TITLE_LENGTH, MAX_WIDGETS } from './dashboard-schema.js';
import type { DashboardFilter, DashboardRepositories } from './dashboards-repository.js';
import type { DashboardRow, WidgetRow } from './dashboards-table.js';
import { checkTemplatePath, isBuiltinPath, type TemplateInfo } from './templates.js';
import { titleMatcher } from './title-regex.js';

/**
 * A dashboard body. `widgets` is the layout in order: an inline definition creates a
 * widget owned by the caller, an integer attaches an existing widget the caller can see.
 */
export interface DashboardInput {
  title?: string | undefined;
  description?: string | undefined;
  widgets?: Array<number | WidgetInput> | undefined;
  template?: string | undefined;
}

export interface DashboardListOptions {
  showAll: boolean;
  title?: string | undefined;
  titleIregex?: string | undefined;
  owners?: number[] | undefined;
}

/** One place of a layout being written: an existing widget, or a new one to create. */
type Slot = { id: number } | { def: WidgetDefinition };

const required = (field: string) => validationError({ [field]: ['This field is required.'] });

export class DashboardsService {
  constructor(
    private readonly repos: DashboardRepositories,
    private readonly now: () => Date = () => new Date(),
    /** A new widget's query checked against its owner (a Metric query's metric). */
    private readonly queryCheck?: WidgetQueryCheck,
  ) {}

  async list(who: Identity, opts: DashboardListOptions, page: PageRequest): Promise<Page<Dashboard>> {
    const res = await this.repos.dashboards.list(this.filter(who, opts), page);
    return { count: res.count, rows: await presentDashboards(who, res.rows, this.repos) };
  }

  async export(
    who: Identity,
    opts: DashboardListOptions,
    page: PageRequest,
  ): Promise<Page<DashboardDefinition>> {
    const res = await this.repos.dashboards.list(this.filter(who, opts), page);
    return { count: res.count, rows: await exportDashboards(res.rows, this.repos) };
  }

  private filter(who: Identity, opts: DashboardListOptions): DashboardFilter {
    const all = opts.showAll && seesAllDashboards(who);
    return {
      ...(all ? {} : { visibleTo: who.userId }),
      ...(opts.owners ? { owners: opts.owners } : {}),
      ...(opts.title !== undefined ? { title: opts.title } : {}),
      ...(opts.titleIregex !== undefined ? { titleMatches: titleMatcher(opts.titleIregex) } : {}),
    };
  }

  async get(who: Identity, id: number): Promise<Dashboard> {
    return this.present(who, await this.visible(who, id));
  }

  async exportOne(who: Identity, id: number): Promise<DashboardDefinition> {
    const [def] = await exportDashboards([await this.visible(who, id)], this.repos);
    return def!;
  }

  /**
   * POST /api/dashboards: clones `sourceId` (attaching its widgets, or copying them with
   * `cloneWidgets`), or creates from a template, or from the body.
   */
  async create(
    who: Identity,
    input: DashboardInput,
    opts: { sourceId?: number | undefined; cloneWidgets: boolean },
  ): Promise<Dashboard> {
    if (opts.sourceId !== undefined) return this.clone(who, input, opts.sourceId, opts.cloneWidgets);
    let title = input.title;
    let description = input.description ?? '';
    let items: Array<number | WidgetInput> = input.widgets ?? [];
    let path = 'widgets';
    if (input.template !== undefined) {
      if (input.widgets !== undefined)
        throw fieldError('widgets', 'Give either a template or widgets, not both.');
      const def = await this.templateDefinition(input.template);
      title ??= def.title;
      description = input.description ?? def.description;
      items = def.widgets;
      path = 'template.widgets';
    }
    if (title === undefined) throw required('title');
    const slots = await this.resolveLayout(who, items, [], path);
    const row = await this.repos.transaction(async (tx) => {
      const nowIso = this.now().toISOString();
      const created = await tx.dashboards.insert({
        title: title!,
        description,
        owner_id: who.userId,
        created_at: nowIso,
        updated_at: nowIso,
      });
      await tx.dashboards.setLayout(created.id, await this.materialise(tx, who, slots));
      return created;
    });
    return this.present(who, row);
  }

  private async clone(
    who: Identity,
    input: DashboardInput,
    sourceId: number,
    cloneWidgets: boolean,
  ): Promise<Dashboard> {
    for (const field of ['widgets', 'template'] as const) {
      if (input[field] !== undefined) throw fieldError(field, 'Not allowed when cloning (source_id).');
    }
    const source = await this.visible(who, sourceId);
    const widgets = (await widgetRowsOf([source.id], this.repos)).get(source.id) ?? [];
    const row = await this.repos.transaction(async (tx) => {
      const nowIso = this.now().toISOString();
      const created = await tx.dashboards.insert({
        title: input.title ?? `Copy of ${source.title}`.slice(0, MAX_TITLE_LENGTH),
        description: input.description ?? source.description,
        owner_id: who.userId,
        created_at: nowIso,
        updated_at: nowIso,
      });
      const slots: Slot[] = widgets.map((w) => (cloneWidgets ? { def: widgetDefinition(w) } : { id: w.id }));
      await tx.dashboards.setLayout(created.id, await this.materialise(tx, who, slots));
      return created;
    });
    return this.present(who, row);
  }

  /**
   * PUT (`partial` false: title required) or PATCH. Fields left out keep their values;
   * `widgets`, when given, becomes the whole layout: widgets left out are detached (and
   * deleted when that leaves them on no dashboard).
   */
  async update(who: Identity, id: number, input: DashboardInput, partial: boolean): Promise<Dashboard> {
    const row = await this.writable(who, id);
    if (!partial && input.title === undefined) throw required('title');
    const current = await this.repos.dashboards.widgetIdsOf(row.id);
    const slots = input.widgets
      ? await this.resolveLayout(who, input.widgets, current, 'widgets')
      : undefined;
    const updated = await this.repos.transaction(async (tx) => {
      const next = await tx.dashboards.update(row.id, {
        ...(input.title !== undefined ? { title: input.title } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        updated_at: this.now().toISOString(),
      });
      if (!next) throw notFound('No such dashboard.');
      if (slots) {
        const ids = await this.materialise(tx, who, slots);
        await tx.dashboards.setLayout(row.id, ids);
        await this.deleteOrphans(
          tx,
          current.filter((w) => !ids.includes(w)),
        );
      }
      return next;
    });
    return this.present(who, updated);
  }

  /** Deletes a dashboard and the widgets that were on no other dashboard. */
  async delete(who: Identity, id: number): Promise<void> {
    const row = await this.writable(who, id);
    await this.repos.transaction(async (tx) => {
      const widgets = await tx.dashboards.widgetIdsOf(row.id);
      await tx.dashboards.delete(row.id);
      await this.deleteOrphans(tx, widgets);
    });
  }

  /** Creates a widget owned by the caller, last on the dashboard. */
  async addWidget(who: Identity, id: number, input: WidgetInput): Promise<Widget> {
    const row = await this.writable(who, id);
    const current = (await widgetRowsOf([row.id], this.repos)).get(row.id) ?? [];
    if (current.length >= MAX_WIDGETS) throw conflict(`A dashboard holds at most ${MAX_WIDGETS} widgets.`);
    const def = completeWidget(input, '', bottomOf(current.map((w) => widgetDefinition(w).position)));
    await checkWidgetAccess(this.queryCheck, who, def.query, 'query');
    const widget = await this.repos.transaction(async (tx) => {
      const nowIso = this.now().toISOString();
      const created = await tx.widgets.insert({
        ...widgetColumns(def),
        owner_id: who.userId,
        created_at: nowIso,
        updated_at: nowIso,
      });
      await tx.dashboards.append(row.id, created.id);
      await tx.dashboards.update(row.id, { updated_at: nowIso });
      return created;
    });
    const [presented] = await presentWidgets(who, [widget], this.repos);
    return presented!;
  }

  /**
   * Detaches the listed widgets (all when `widgetIds` is undefined). A widget left on no
   * dashboard is deleted. A listed widget that is not on the dashboard is a 404 and
   * nothing is detached.
   */
  async detachWidgets(who: Identity, id: number, widgetIds?: number[]): Promise<void> {
    const row = await this.writable(who, id);
    const current = await this.repos.dashboards.widgetIdsOf(row.id);
    const targets = widgetIds ? [...new Set(widgetIds)] : current;
    const missing = targets.find((w) => !current.includes(w));
    if (missing !== undefined) throw notFound(`Widget ${missing} is not on this dashboard.`);
    if (!targets.length) return;
    await this.repos.transaction(async (tx) => {
      await tx.dashboards.detach(row.id, targets);
      await this.deleteOrphans(tx, targets);
      await tx.dashboards.update(row.id, { updated_at: this.now().toISOString() });
    });
  }

  /**
   * Saves the dashboard's portable form as a template. A path taken by another user's
   * template is a 409 (admins may overwrite any).
   */
  async saveTemplate(who: Identity, id: number, path: string): Promise<{ path: string }> {
    const row = await this.visible(who, id);
    checkTemplatePath(path, 'path');
    if (isBuiltinPath(path))
      throw fieldError('path', 'Paths under builtin/ are reserved for built-in templates.');
    const [def] = await exportDashboards([row], this.repos);
    const saved = await this.repos.templates.save(
      { path, owner_id: who.userId, definition: JSON.stringify(def), created_at: this.now().toISOString() },
      who.isAdmin ? undefined : who.userId,
    );
    if (!saved) throw conflict(`The template "${path}" belongs to another user.`);
    return { path };
  }

  /** Built-in and saved templates; every user sees (and may use) all of them. */
  async listTemplates(page: PageRequest): Promise<Page<TemplateInfo>> {
    const builtin = Object.entries(BUILTIN_TEMPLATES).map(([path, def]) => ({
      path,
      title: def.title,
      builtin: true,
    }));
    const saved = (await this.repos.templates.all()).map((r) => ({
      path: r.path,
      title: (JSON.parse(r.definition) as DashboardDefinition).title,
      builtin: false,
    }));
    const all = [...builtin, ...saved].sort((a, b) => {
      for (const { field, desc } of [...page.ordering, { field: 'path', desc: false }]) {
        const key = field as 'path' | 'title';
        if (a[key] !== b[key]) return (a[key] < b[key] ? -1 : 1) * (desc ? -1 : 1);
      }
      return 0;
    });
    return { count: all.length, rows: all.slice(page.offset, page.offset + page.limit) };
  }

  /** A visible dashboard's title and widget definitions in layout order (for reports). */
  reportable(who: Identity, id: number): Promise<DashboardDefinition> {
    return this.exportOne(who, id);
  }

  /**
   * The widgets behind a live subscription: the one widget, or every widget of
   * the dashboard, in layout order, with their stored queries. 404 when not visible.
   */
  async liveWidgets(
    who: Identity,
    target: { widget_id: number } | { dashboard_id: number },
  ): Promise<Array<{ widgetId: number; query: WidgetQuery; refreshMs: number | null; geo: boolean }>> {
    let rows: WidgetRow[];
    if ('widget_id' in target) {
      const row = await this.repos.widgets.byId(target.widget_id);
      if (!row || !(await canSeeWidget(who, row, this.repos))) throw notFound('No such widget.');
      rows = [row];
    } else {
      const dashboard = await this.visible(who, target.dashboard_id);
      rows = (await widgetRowsOf([dashboard.id], this.repos)).get(dashboard.id) ?? [];
    }
    return rows.map((row) => {
      const def = widgetDefinition(row);
      return {
        widgetId: row.id,
        query: def.query,
        refreshMs: row.refresh_interval === null ? null : row.refresh_interval * 1000,
        // A map places its values by GeoIP.
        geo: def.visualization.kind === 'map',
      };
    });
  }

  /** The dashboard if the caller may see it (for reads and subscriptions), else 404. */
  async visible(who: Identity, id: number): Promise<DashboardRow> {
    const row = await this.repos.dashboards.byId(id);
    if (!row || !canSeeDashboard(who, row)) throw notFound('No such dashboard.');
    return row;
  }

  /**
   * A dashboard its owner or an admin may change (its layout, title, widgets) or delete.
   * `manage_dashboards` lets its holder see every dashboard (and clone it), not change
   * another's: `403` for one they see but do not own, `404` for one they do not see.
   */
  private async writable(who: Identity, id: number): Promise<DashboardRow> {
    const row = await this.visible(who, id);
    if (row.owner_id !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner or an administrator may change this dashboard.');
    return row;
  }

  private async present(who: Identity, row: DashboardRow): Promise<Dashboard> {
    const [dashboard] = await presentDashboards(who, [row], this.repos);
    return dashboard!;
  }

  private async templateDefinition(path: string): Promise<DashboardDefinition> {
    checkTemplatePath(path, 'template');
    const builtin = Object.hasOwn(BUILTIN_TEMPLATES, path) ? BUILTIN_TEMPLATES[path] : undefined;
    if (builtin) return builtin;
    const saved = await this.repos.templates.byPath(path);
    if (!saved) throw fieldError('template', `No template at "${path}".`);
    return JSON.parse(saved.definition) as DashboardDefinition;
  }

  /**
   * Checks a layout from a body before anything is written: ids must be unique and name
   * widgets already on the dashboard (`current`) or visible to the caller; definitions
   * must be complete and valid (new ones without a position go below the others).
   */
  private async resolveLayout(
    who: Identity,
    items: Array<number | WidgetInput>,
    current: number[],
    path: string,
  ): Promise<Slot[]> {
    if (items.length > MAX_WIDGETS) throw fieldError(path, `At most ${MAX_WIDGETS} widgets.`);
    const ids = items.filter((i): i is number => typeof i === 'number');
    requireUnique(ids, path);
    const rows = new Map((await this.repos.widgets.byIds(ids)).map((r) => [r.id, r]));
    const seen = await this.seeableWidgets(who, [...rows.values()], current);
    const errors: FieldErrors = {};
    ids.forEach((id) => {
      if (!seen.has(id)) errors[`${path}.${items.indexOf(id)}`] = [`No widget ${id} you can see.`];
    });
    if (Object.keys(errors).length) throw validationError(errors);
    const slots: Slot[] = [];
    const positions = [];
    for (const [i, item] of items.entries()) {
      if (typeof item === 'number') {
        slots.push({ id: item });
        positions.push(widgetDefinition(rows.get(item)!).position);
      } else {
        const def = completeWidget(item, `${path}.${i}`, bottomOf(positions));
        await checkWidgetAccess(this.queryCheck, who, def.query, `${path}.${i}.query`);
        slots.push({ def });
        positions.push(def.position);
      }
    }
    return slots;
  }

  private async seeableWidgets(who: Identity, rows: WidgetRow[], current: number[]): Promise<Set<number>> {
    const ok = new Set(
      rows
        .filter((r) => current.includes(r.id) || r.owner_id === who.userId || seesAllWidgets(who))
        .map((r) => r.id),
    );
    const rest = rows.filter((r) => !ok.has(r.id)).map((r) => r.id);
    for (const pair of await this.repos.dashboards.dashboardsOfWidgets(rest, dashboardScope(who))) {
      ok.add(pair.widget_id);
    }
    return ok;
  }

  /** Creates the new widgets of a layout (owned by the caller); answers the ids in order. */
  private async materialise(tx: DashboardRepositories, who: Identity, slots: Slot[]): Promise<number[]> {
    const ids: number[] = [];
    const nowIso = this.now().toISOString();
    for (const slot of slots) {
      if ('id' in slot) {
        ids.push(slot.id);
        continue;
      }
      const row = await tx.widgets.insert({
        ...widgetColumns(slot.def),
        owner_id: who.userId,
        created_at: nowIso,
        updated_at: nowIso,
      });
      ids.push(row.id);
    }
    return ids;
  }

  private async deleteOrphans(tx: DashboardRepositories, widgetIds: number[]): Promise<void> {
    await tx.widgets.deleteMany(await tx.dashboards.unattached(widgetIds));
  }
}
