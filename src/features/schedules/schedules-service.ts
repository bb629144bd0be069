import { can, type Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import { AppError, fieldError, notFound } from '../../errors/errors.js';
import { resolveTimeRange } from '../../query/time-range.js';
import type { ChannelsService } from '../alerting/channels-service.js';
import { channelKinds } from '../alerting/index.js';
import type { DashboardReader } from '../reports/reports-service.js';
import type { SavedSearchesService } from '../saved-searches/saved-searches-service.js';
import { canonicalTimeZone, describeCron, nextRuns, type ParsedCron, parseCron } from './schedule-cron.js';
import {
  type LastRun,
  SCHEDULE_FORMATS,
  type Schedule,
  type ScheduleInput,
  type SchedulePatch,
} from './schedule-schema.js';
import type { ScheduleFilter, SchedulesRepository } from './schedules-repository.js';
import type { ScheduleRow, ScheduleUpdate } from './schedules-table.js';

/** Most channels a schedule delivers to. */
const MAX_DELIVER_TO = 20;

export type ScheduleSourceRef = { dashboard_id: number } | { saved_search_id: number };

/** A stored schedule's values, parsed. */
export interface ScheduleOf {
  row: ScheduleRow;
  source: ScheduleSourceRef;
  timeRange: { preset: string } | null;
  deliverTo: number[];
  lastRun: LastRun | null;
}

export const scheduleOf = (row: ScheduleRow): ScheduleOf => ({
  row,
  source: JSON.parse(row.source) as ScheduleSourceRef,
  timeRange: row.time_range ? (JSON.parse(row.time_range) as { preset: string }) : null,
  deliverTo: JSON.parse(row.deliver_to) as number[],
  lastRun: row.last_run ? (JSON.parse(row.last_run) as LastRun) : null,
});

export const presentSchedule = (row: ScheduleRow): Schedule => {
  const s = scheduleOf(row);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    owner: row.owner_id,
    source: s.source,
    format: row.format as Schedule['format'],
    time_range: s.timeRange,
    cron: row.cron,
    time_zone: row.time_zone,
    deliver_to: s.deliverTo,
    enabled: row.enabled === 1,
    keep_reports: row.keep_reports,
    last_run: s.lastRun,
    next_run_at: row.next_run_at === null ? null : new Date(row.next_run_at).toISOString(),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
};

export interface SchedulesServiceOptions {
  /** `schedulesPerUser`. */
  perUser: number;
  /** Who a user is now (their rights as they stand), or null when they are gone. */
  ownerIdentity: (userId: number) => Promise<Identity | null>;
  now?: () => number;
}

/** What a preview answers (GET /api/schedules/preview). */
export interface Preview {
  cron: string;
  time_zone: string;
  description: string;
  next_runs: string[];
}

/**
 * Report schedules (docs/api/schedules.md): who may see and change them, and what a valid one is.
 * Runs are the scheduler's (schedule-runner.ts).
 */
export class SchedulesService {
  constructor(
    private readonly repo: SchedulesRepository,
    private readonly deps: {
      channels: ChannelsService;
      dashboards: DashboardReader;
      savedSearches: SavedSearchesService;
    },
    private readonly opts: SchedulesServiceOptions,
  ) {}

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** The schedule if the caller may see it (its owner, admins); else 404. */
  async visible(who: Identity, id: number): Promise<ScheduleRow> {
    const row = await this.repo.byId(id);
    if (!row || (row.owner_id !== who.userId && !who.isAdmin)) throw notFound('No such schedule.');
    return row;
  }

  async list(
    who: Identity,
    filter: Omit<ScheduleFilter, 'owners'> & { owners?: number[] | undefined; showAll: boolean },
    page: PageRequest,
  ): Promise<Page<Schedule>> {
    const everyone = who.isAdmin && filter.showAll;
    const owners = everyone
      ? filter.owners
      : filter.owners
        ? filter.owners.filter((o) => o === who.userId)
        : [who.userId];
    const res = await this.repo.list({ owners, name: filter.name, enabled: filter.enabled }, page);
    return { count: res.count, rows: res.rows.map(presentSchedule) };
  }

  async get(who: Identity, id: number): Promise<Schedule> {
    return presentSchedule(await this.visible(who, id));
  }

  preview(input: { cron: string; time_zone?: string | undefined; from?: string; count?: number }): Preview {
    const zone = this.zone(input.time_zone ?? 'UTC');
    const parsed = parseCron(input.cron);
    let from = this.now();
    if (input.from !== undefined) {
      const text = input.from.trim();
      const parsedFrom = /^-?[0-9]{1,12}$/.test(text) ? Number(text) * 1000 : Date.parse(text);
      if (!Number.isFinite(parsedFrom) || Math.abs(parsedFrom) > 8.64e15)
        throw fieldError('from', 'ISO 8601 or Unix seconds.');
      from = parsedFrom;
    }
    const count = input.count ?? 5;
    if (!Number.isInteger(count) || count < 1 || count > 100) throw fieldError('count', 'From 1 to 100.');
    return {
      cron: parsed.text,
      time_zone: zone,
      description: describeCron(parsed, zone),
      next_runs: nextRuns(parsed, zone, new Date(from), count).map((d) => d.toISOString()),
    };
  }

  async create(who: Identity, input: ScheduleInput): Promise<Schedule> {
    const values = await this.check(who, who.userId, input);
    if ((await this.repo.countOf(who.userId)) >= this.opts.perUser)
      throw new AppError(
        409,
        'limit_reached',
        `You own ${this.opts.perUser} schedules, the most one user may (setting schedulesPerUser); delete one first.`,
      );
    const now = new Date(this.now()).toISOString();
    const row = await this.repo.insert({
      ...values,
      owner_id: who.userId,
      last_run: null,
      created_at: now,
      updated_at: now,
    });
    return presentSchedule(row);
  }

  /** PATCH: what is given changes; PUT (`replace`): what is left out returns to its default. */
  async update(who: Identity, id: number, patch: SchedulePatch, replace = false): Promise<Schedule> {
    const row = await this.visible(who, id);
    const current = scheduleOf(row);
    const merged: ScheduleInput = replace
      ? {
          description: '',
          time_range: null,
          time_zone: 'UTC',
          deliver_to: [],
          enabled: true,
          keep_reports: 10,
          ...(patch as ScheduleInput),
        }
      : {
          name: row.name,
          description: row.description,
          source: current.source,
          format: row.format,
          time_range: current.timeRange,
          cron: row.cron,
          time_zone: row.time_zone,
          deliver_to: current.deliverTo,
          enabled: row.enabled === 1,
          keep_reports: row.keep_reports,
          ...patch,
        };
    const values = await this.check(who, row.owner_id, merged);
    // The next slot moves only when what decides it changed.
    const moved =
      values.cron !== row.cron || values.time_zone !== row.time_zone || values.enabled !== row.enabled;
    const change: ScheduleUpdate = {
      ...values,
      ...(moved ? {} : { next_run_at: row.next_run_at }),
      updated_at: new Date(this.now()).toISOString(),
    };
    const updated = await this.repo.update(id, change);
    if (!updated) throw notFound('No such schedule.');
    return presentSchedule(updated);
  }

  async delete(who: Identity, id: number): Promise<void> {
    await this.visible(who, id);
    if (!(await this.repo.delete(id))) throw notFound('No such schedule.');
  }

  /** The next slot strictly after `after` (epoch ms), or null (disabled). */
  nextSlot(row: Pick<ScheduleRow, 'cron' | 'time_zone' | 'enabled'>, after: number): number | null {
    if (row.enabled !== 1) return null;
    const [next] = nextRuns(parseCron(row.cron), row.time_zone, new Date(after), 1);
    return next ? next.getTime() : null;
  }

  /** How many slots fall in (from, to], counting at most `max`. */
  slotsBetween(row: Pick<ScheduleRow, 'cron' | 'time_zone'>, from: number, to: number, max = 1000): number {
    const parsed = parseCron(row.cron);
    let n = 0;
    let at = new Date(from);
    while (n < max) {
      const [next] = nextRuns(parsed, row.time_zone, at, 1);
      if (!next || next.getTime() > to) break;
      n++;
      at = next;
    }
    return n;
  }

  private zone(name: string): string {
    const zone = canonicalTimeZone(name);
    if (!zone)
      throw fieldError(
        'time_zone',
        `Unknown time zone "${name}": use an IANA name such as Europe/Berlin or UTC.`,
      );
    return zone;
  }

  /** A whole schedule's values checked as §23 says; each mistake is a 400 on its field. */
  private async check(who: Identity, ownerId: number, input: ScheduleInput) {
    const name = input.name.trim();
    if (!name) throw fieldError('name', 'Must not be blank.');
    if (!(SCHEDULE_FORMATS as readonly string[]).includes(input.format))
      throw fieldError('format', `Use one of ${SCHEDULE_FORMATS.join(', ')}.`);
    const timeZone = this.zone(input.time_zone ?? 'UTC');
    const parsed: ParsedCron = parseCron(input.cron);
    // Throws (400 on cron) when it never runs.
    nextRuns(parsed, timeZone, new Date(this.now()), 1);
    const timeRange = this.checkTimeRange(input.time_range ?? null);
    const owner = ownerId === who.userId ? who : await this.opts.ownerIdentity(ownerId);
    if (!owner) throw notFound('No such schedule.');
    await this.checkSource(owner, input.source);
    const deliverTo = [...new Set(input.deliver_to ?? [])];
    await this.checkChannels(who, ownerId, deliverTo);
    const enabled = input.enabled ?? true;
    const keep = input.keep_reports ?? 10;
    return {
      name,
      description: input.description ?? '',
      source: JSON.stringify(input.source),
      format: input.format,
      time_range: timeRange ? JSON.stringify(timeRange) : null,
      cron: parsed.text,
      time_zone: timeZone,
      deliver_to: JSON.stringify(deliverTo),
      enabled: enabled ? 1 : 0,
      keep_reports: keep,
      next_run_at: enabled
        ? (nextRuns(parsed, timeZone, new Date(this.now()), 1)[0] as Date).getTime()
        : null,
    };
  }

  private checkTimeRange(range: object | null): { preset: string } | null {
    if (range === null) return null;
    const keys = Object.keys(range);
    const preset = (range as { preset?: unknown }).preset;
    if (keys.length !== 1 || typeof preset !== 'string')
      throw fieldError(
        'time_range',
        'A recurring run needs a relative range: {"preset": name} (or null for the source\'s own); absolute ranges make no sense here.',
      );
    try {
      resolveTimeRange({ preset }, this.now());
    } catch (err) {
      if (err instanceof AppError) throw fieldError('time_range', err.message);
      throw err;
    }
    return { preset };
  }

  private async checkSource(owner: Identity, source: ScheduleSourceRef): Promise<void> {
    const missing = (err: unknown, field: string, what: string) => {
      if (err instanceof AppError && err.status === 404)
        throw fieldError(field, `No such ${what}, or its owner cannot see it.`);
      throw err;
    };
    if ('dashboard_id' in source)
      await this.deps.dashboards
        .reportable(owner, source.dashboard_id)
        .catch((err: unknown) => missing(err, 'source.dashboard_id', 'dashboard'));
    else
      await this.deps.savedSearches
        .get(owner, source.saved_search_id)
        .catch((err: unknown) => missing(err, 'source.saved_search_id', 'saved search'));
  }

  private async checkChannels(who: Identity, ownerId: number, ids: number[]): Promise<void> {
    if (ids.length > MAX_DELIVER_TO) throw fieldError('deliver_to', `At most ${MAX_DELIVER_TO} channels.`);
    const found = await this.deps.channels.ownersAndTypes(ids);
    const any = can(who, 'manage_triggers');
    for (const id of ids) {
      const c = found.get(id);
      if (!c || (c.owner_id !== ownerId && !any)) throw fieldError('deliver_to', `No such channel: ${id}.`);
      // Each kind says whether it carries reports (the on-call kinds page people).
      if (!channelKinds.carriesReports(c.type))
        throw fieldError('deliver_to', `Channel ${id} is a ${c.type} channel, which carries no report.`);
    }
  }
}
