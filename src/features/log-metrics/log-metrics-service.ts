import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import {
  AppError,
  createError,
  type FieldErrors,
  notFound,
  permissionDenied,
  validationError,
} from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { FilterNode } from '../../filter/ast.js';
import { parseQuery } from '../../syntax/parse-query.js';
import { maySee } from '../teams/index.js';
import type { TeamsService } from '../teams/teams-service.js';
import { generationOf, type LogMetricCounting } from './log-metric-counting.js';
import type { LogMetric, LogMetricInput, LogMetricKind, LogMetricPatch } from './log-metric-schema.js';
import type { LogMetricRow, LogMetricsRepository } from './log-metrics-repository.js';

export interface LogMetricFilter {
  name?: string | undefined;
  owners?: readonly number[] | undefined;
  kind?: string | undefined;
  shared?: boolean | undefined;
  /** Admins: every metric (otherwise theirs and those shared with them). */
  showAll?: boolean | undefined;
}

/** The settings that bound log metrics. */
export interface LogMetricBounds {
  /** `logMetricsPerUser`: metrics a user who is no admin may own. */
  perUser: number;
  /** `logMetricMaxSeries`: the most `max_series` may be. */
  maxSeries: number;
}

const DEFAULTS = {
  description: '',
  query: '',
  kind: 'count' as LogMetricKind,
  labels: [] as string[],
  resolution_seconds: 60,
  retention_days: 400,
  max_series: 10_000,
  quantiles: [0.5, 0.9, 0.99],
};

/** What a change of resets the metric: what it counts and how (docs/api/log-metrics.md). */
const COUNTED = ['query', 'kind', 'field', 'quantiles', 'labels', 'resolution_seconds'] as const;

/** Fields a metric may not aggregate (text or time), and those no label may be. */
const NOT_NUMERIC = new Set([
  'ev_id',
  'ts',
  'received_at',
  'stored_at',
  'message',
  'raw',
  'host',
  'app',
  'severity',
  'facility',
  'source',
  'intake',
  'user',
  'action',
  'pattern_id',
  'src_ip',
  'dst_ip',
]);
const NOT_LABELS = new Set(['ev_id', 'ts', 'received_at', 'stored_at', 'message', 'raw']);
const FIELD_NAME = /^[\p{L}\p{N}_.\-@]{1,200}$/u;
const NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const NAME_SUFFIXES = ['_total', '_sum', '_count', '_bucket', '_created', '_info'];

/** A field's name in the exposition: `[a-zA-Z0-9_]` kept, the rest `_`, `_` before a digit. */
export const prometheusLabel = (field: string) => {
  const name = field.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(name) ? `_${name}` : name;
};

/**
 * Log metrics' definitions (docs/api/log-metrics.md): visible to their owner, to the teams
 * (or everyone) they are shared with and to admins; changed, backfilled and deleted by
 * their owner and admins. A change of what is counted resets the metric (`counting_since`
 * becomes the change's instant). Names are unique on the server: they are the exposition's.
 */
export class LogMetricsService {
  constructor(
    private readonly repo: LogMetricsRepository,
    private readonly teams: TeamsService,
    private readonly bounds: LogMetricBounds,
    /** Gives the event store the metrics to count; its counts give `series_count`, `dropped_series`. */
    private readonly counting: LogMetricCounting,
    private readonly events: EventStore,
  ) {}

  /**
   * A metric with its series, folded tuples and backfilled ranges, as the event store keeps
   * them (a backfill records its range with its counts there, in one transaction).
   */
  private async counted(m: LogMetric): Promise<LogMetric> {
    const generation = generationOf(m.counting_since);
    const { series, dropped } = await this.events.metricCounts(m.id, generation);
    const covered = await this.events.metricBackfilled(m.id, generation);
    return {
      ...m,
      series_count: series,
      dropped_series: dropped,
      backfilled: covered.map((r) => ({ from: r.fromMs / 1000, to: r.toMs / 1000 })),
    };
  }

  /** What a metric is when its definition leaves a field out (`max_series` within the setting). */
  private defaults() {
    return { ...DEFAULTS, max_series: Math.min(DEFAULTS.max_series, this.bounds.maxSeries) };
  }

  async list(who: Identity, filter: LogMetricFilter, page: PageRequest): Promise<Page<LogMetric>> {
    const reader = {
      userId: who.userId,
      teams: await this.teams.teamsOf(who.userId),
      all: who.isAdmin && filter.showAll === true,
    };
    const found = await this.repo.list(
      { reader, nameContains: filter.name, owners: filter.owners, kind: filter.kind, shared: filter.shared },
      page,
    );
    const shares = await this.repo.teamsOf(found.rows.map((r) => r.id));
    return {
      count: found.count,
      rows: await Promise.all(found.rows.map((r) => this.counted(present(r, shares.get(r.id) ?? [])))),
    };
  }

  /** Every metric `who` sees (theirs and those shared with them), as stored; `names` narrows. */
  async seen(who: Identity, names?: readonly string[]): Promise<LogMetric[]> {
    const reader = { userId: who.userId, teams: await this.teams.teamsOf(who.userId), all: false };
    const rows = await this.repo.seen(reader, names);
    const shares = await this.repo.teamsOf(rows.map((r) => r.id));
    return rows.map((r) => present(r, shares.get(r.id) ?? []));
  }

  async get(who: Identity, id: number): Promise<LogMetric> {
    const { row, teams } = await this.visible(who, id);
    return this.counted(present(row, teams));
  }

  async create(who: Identity, input: LogMetricInput): Promise<LogMetric> {
    const def = { ...this.defaults(), field: null, ...input };
    const checked = await this.check(def, input);
    const now = new Date().toISOString();
    const stored = await this.repo.insert(
      {
        name: def.name,
        description: def.description,
        query: def.query,
        kind: def.kind,
        field: checked.field,
        quantiles: checked.quantiles ? JSON.stringify(checked.quantiles) : null,
        labels: JSON.stringify(def.labels),
        resolution_seconds: def.resolution_seconds,
        retention_days: def.retention_days,
        max_series: def.max_series,
        owner: who.userId,
        share_everyone: input.shared_with?.everyone ? 1 : 0,
        counting_since: now,
        backfilled: '[]',
        created_at: now,
        updated_at: now,
      },
      checked.teams ?? [],
      who.isAdmin ? null : this.bounds.perUser,
    );
    if ('taken' in stored) throw nameTaken(def.name);
    if ('owned' in stored)
      throw new AppError(
        409,
        'limit_reached',
        `You own ${stored.owned} log metrics, the most one user may (setting logMetricsPerUser); delete one first.`,
      );
    // Answered once the store counts by it: every event acknowledged after counts.
    await this.counting.update();
    return this.get(who, stored.id);
  }

  /** PATCH: what is given changes; PUT (`replace`): what is left out returns to its default. */
  async update(who: Identity, id: number, patch: LogMetricPatch, replace = false): Promise<LogMetric> {
    const { row, teams } = await this.visible(who, id);
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) changes a log metric.');
    const given: LogMetricPatch = replace
      ? {
          ...this.defaults(),
          field: null,
          quantiles: null,
          shared_with: { teams: [], everyone: false },
          ...patch,
        }
      : patch;
    const before = present(row, teams);
    const def = { ...before, ...given };
    // What the kind does not take goes with a change of kind; `quantiles` left out is kept
    // (PATCH) or its default (PUT).
    if (replace ? patch.quantiles === undefined : given.quantiles === undefined)
      def.quantiles =
        def.kind !== 'quantiles'
          ? null
          : replace
            ? DEFAULTS.quantiles
            : (before.quantiles ?? DEFAULTS.quantiles);
    if (given.field === undefined && def.kind === 'count') def.field = null;
    const checked = await this.check(def, given);
    const now = new Date().toISOString();
    const after = { ...def, field: checked.field, quantiles: checked.quantiles };
    const reset = COUNTED.some((k) => JSON.stringify(after[k] ?? null) !== JSON.stringify(before[k] ?? null));
    const change: Parameters<LogMetricsRepository['update']>[1] = {
      name: after.name,
      description: after.description,
      query: after.query,
      kind: after.kind,
      field: after.field,
      quantiles: after.quantiles ? JSON.stringify(after.quantiles) : null,
      labels: JSON.stringify(after.labels),
      resolution_seconds: after.resolution_seconds,
      retention_days: after.retention_days,
      max_series: after.max_series,
      updated_at: now,
      ...(reset ? { counting_since: now, backfilled: '[]' } : {}),
    };
    if (given.shared_with?.everyone !== undefined) change.share_everyone = given.shared_with.everyone ? 1 : 0;
    const done = await this.repo.update(id, change, checked.teams);
    if (done === false) throw notFound('No such log metric.');
    if (done !== true) throw nameTaken(after.name);
    await this.counting.update();
    return this.get(who, id);
  }

  async delete(who: Identity, id: number): Promise<void> {
    const { row } = await this.visible(who, id);
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) deletes a log metric.');
    if (!(await this.repo.delete(id))) throw notFound('No such log metric.');
    await this.counting.update();
  }

  /** A metric the caller may change (and backfill): its owner's or an admin's; 403 for others who see it. */
  async owned(who: Identity, id: number): Promise<LogMetric> {
    const { row, teams } = await this.visible(who, id);
    if (row.owner !== who.userId && !who.isAdmin)
      throw permissionDenied('Only its owner (or an admin) backfills a log metric.');
    return present(row, teams);
  }

  /** A metric `who` may see (a Metric query's owner as it begins), or none. */
  async visibleTo(who: Pick<Identity, 'userId' | 'isAdmin'>, id: number): Promise<LogMetric | undefined> {
    const row = await this.repo.byId(id);
    const teams = (await this.repo.teamsOf([id])).get(id) ?? [];
    if (row && (await maySee(who, row, teams, (u) => this.teams.teamsOf(u)))) return present(row, teams);
    return undefined;
  }

  /** Whether a metric of this id exists, whoever may see it (a widget of a deleted metric begins, to end ERROR). */
  async exists(id: number): Promise<boolean> {
    return (await this.repo.byId(id)) !== undefined;
  }

  /** The metric and the teams it is shared with, if the caller may see it; else 404. */
  private async visible(who: Identity, id: number): Promise<{ row: LogMetricRow; teams: number[] }> {
    const row = await this.repo.byId(id);
    const teams = (await this.repo.teamsOf([id])).get(id) ?? [];
    if (row && (await maySee(who, row, teams, (u) => this.teams.teamsOf(u)))) return { row, teams };
    throw notFound('No such log metric.');
  }

  /**
   * The definition `def` (as it would be stored) follows every rule; each broken one is a
   * 400 naming its field. Returns the field and quantiles as stored and the teams to share with.
   */
  private async check(
    def: Pick<
      LogMetric,
      | 'name'
      | 'description'
      | 'query'
      | 'kind'
      | 'labels'
      | 'resolution_seconds'
      | 'retention_days'
      | 'max_series'
    > & {
      field?: string | null | undefined;
      quantiles?: number[] | null | undefined;
    },
    given: LogMetricPatch,
  ): Promise<{ field: string | null; quantiles: number[] | null; teams: number[] | undefined }> {
    const errors: FieldErrors = {};
    const fail = (field: string, message: string) => {
      errors[field] = [...(errors[field] ?? []), message];
    };
    if (!NAME.test(def.name)) fail('name', 'Letters, digits and `_`, not starting with a digit.');
    else if (def.name.startsWith('__') || def.name.startsWith('logscope_'))
      fail('name', 'Must not start with `__` or `logscope_` (reserved).');
    else if (NAME_SUFFIXES.some((s) => def.name.endsWith(s)))
      fail('name', `Must not end with ${NAME_SUFFIXES.join(', ')}: the exposition adds those.`);
    if (given.query !== undefined) {
      try {
        const filter = parseQuery(def.query, { path: 'query' });
        if (mentionsStream(filter))
          fail(
            'query',
            'A log metric counts every stream: choose streams when reading its series, not with `stream:`.',
          );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        fail('query', err.message);
      }
    }
    const kind = def.kind;
    let field: string | null = def.field ?? null;
    if (kind === 'count') {
      if (field !== null) fail('field', 'A `count` metric counts events: leave `field` out.');
      field = null;
    } else if (field === null) fail('field', `A \`${kind}\` metric needs the numeric field it aggregates.`);
    else if (!FIELD_NAME.test(field)) fail('field', 'A field name: 1-200 letters, digits, `_ . - @`.');
    else if (NOT_NUMERIC.has(field))
      fail('field', `\`${field}\` is a text or time field: name a numeric one.`);
    let quantiles: number[] | null = def.quantiles ?? null;
    if (kind !== 'quantiles') {
      if (given.quantiles !== undefined && given.quantiles !== null)
        fail('quantiles', 'Only a `quantiles` metric takes quantiles.');
      quantiles = null;
    } else {
      const q = quantiles ?? DEFAULTS.quantiles;
      if (q.length < 1 || q.length > 10) fail('quantiles', 'From 1 to 10 quantiles.');
      else if (q.some((v) => !(v > 0 && v < 1))) fail('quantiles', 'Each strictly between 0 and 1.');
      else if (new Set(q).size !== q.length) fail('quantiles', 'Each at most once.');
      quantiles = [...q].sort((a, b) => a - b);
    }
    const labels = def.labels;
    const names = new Set<string>();
    if (labels.length > 5) fail('labels', 'At most 5 labels.');
    for (const label of labels) {
      const prom = prometheusLabel(label);
      if (!FIELD_NAME.test(label))
        fail('labels', `\`${label}\` is no field name (1-200 letters, digits, \`_ . - @\`).`);
      else if (NOT_LABELS.has(label))
        fail('labels', `\`${label}\` cannot be a label (its values are all different).`);
      else if (prom === 'quantile' || prom === 'le' || prom.startsWith('__'))
        fail('labels', `\`${label}\` would be the label \`${prom}\`, which Prometheus reserves.`);
      else if (names.has(prom)) fail('labels', `Two labels would both be \`${prom}\` in the exposition.`);
      names.add(prom);
    }
    if (3600 % def.resolution_seconds !== 0)
      fail('resolution_seconds', 'Must divide 3600 (10, 15, 20, 30, 60, 300, 900, 3600, ...).');
    if (def.max_series > this.bounds.maxSeries)
      fail('max_series', `At most ${this.bounds.maxSeries} (setting logMetricMaxSeries).`);
    let teams: number[] | undefined;
    if (given.shared_with?.teams !== undefined) {
      teams = [...new Set(given.shared_with.teams)].sort((a, b) => a - b);
      const found = await this.repo.existingTeams(teams);
      const missing = teams.filter((t) => !found.has(t));
      if (missing.length) fail('shared_with.teams', `No team has the id ${missing.slice(0, 20).join(', ')}.`);
    }
    if (Object.keys(errors).length) throw validationError(errors);
    return { field, quantiles, teams };
  }
}

const nameTaken = (name: string) =>
  createError(409, 'name_taken', `Another log metric is named ${name}: names are unique on the server.`, {
    name: ['Taken by another log metric.'],
  });

/** Whether the filter tests `stream` anywhere. */
function mentionsStream(n: FilterNode): boolean {
  switch (n.kind) {
    case 'and':
    case 'or':
      return n.items.some(mentionsStream);
    case 'not':
      return mentionsStream(n.item);
    case 'cond':
      return n.field === 'stream';
    default:
      return false;
  }
}

const present = (r: LogMetricRow, teams: readonly number[]): LogMetric => ({
  id: r.id,
  name: r.name,
  description: r.description,
  query: r.query,
  kind: r.kind as LogMetricKind,
  field: r.field,
  quantiles: r.quantiles === null ? null : (JSON.parse(r.quantiles) as number[]),
  labels: JSON.parse(r.labels) as string[],
  resolution_seconds: r.resolution_seconds,
  retention_days: r.retention_days,
  max_series: r.max_series,
  shared_with: { teams: [...teams], everyone: r.share_everyone === 1 },
  owner: r.owner,
  counting_since: r.counting_since,
  backfilled: JSON.parse(r.backfilled) as Array<{ from: number; to: number }>,
  // The event store's (`counted`).
  series_count: 0,
  dropped_series: 0,
  created_at: r.created_at,
  updated_at: r.updated_at,
});
