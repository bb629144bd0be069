import type { Identity } from '../../core/identity.js';
import { type Log, silentLog } from '../../core/log.js';
import {
  cachedFor,
  counter,
  gauge,
  histogram,
  type MetricDecl,
  Observations,
  STORE_STATS_MS,
} from '../../core/metrics.js';
import { AppError } from '../../errors/errors.js';
import type { LeasesRepository } from '../../metadata/leases-repository.js';
import { resolveTimeRange } from '../../query/time-range.js';
import type { ChannelsService } from '../alerting/channels-service.js';
import type { DeliveryQueue } from '../alerting/index.js';
import type { AuditTrail } from '../audit/index.js';
import { ADOPT_EVERY_MS } from '../component.js';
import type { ReportSource } from '../reports/index.js';
import type { ReportsService } from '../reports/reports-service.js';
import type { SavedSearchesService } from '../saved-searches/saved-searches-service.js';
import type { ReleaseGate } from '../streams/index.js';
import { localDateTime } from './schedule-cron.js';
import { deliverRun } from './schedule-delivery.js';
import type { LastRun, Schedule } from './schedule-schema.js';
import type { SchedulesRepository } from './schedules-repository.js';
import { presentSchedule, type SchedulesService, scheduleOf } from './schedules-service.js';
import type { ScheduleRow } from './schedules-table.js';

/** The lease whose holder starts a cluster's scheduled runs. */
export const SCHEDULER_LEASE = 'scheduler';
/** How often due schedules are looked for (ms). */
const TICK_MS = 1000;
/** A slot started this late was missed (the server was down): its run says how many slots passed. */
const MISSED_AFTER_MS = 60_000;
/** Claims older than this are forgotten (ms). */
const KEEP_CLAIMS_MS = 7 * 86_400_000;

/** Buckets of the run and lateness histograms (seconds). */
const BUCKETS = [0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600];

/** A run's failure as its record tells it (not an internal error). */
class RunError extends Error {}

/** A range resolved at a run's start (Unix s, [from, to)). */
type RunRange = { ts_from: number; ts_to: number };

/** Who a run's audit record names. */
export interface RunActor {
  user_id: number | null;
  username: string | null;
  token_key_id: string | null;
  address: string | null;
}

export interface ScheduleRunnerDeps {
  repo: SchedulesRepository;
  schedules: SchedulesService;
  reports: ReportsService;
  savedSearches: SavedSearchesService;
  channels: ChannelsService;
  deliveryQueue: DeliveryQueue;
  releaseGate: Pick<ReleaseGate, 'refusal'>;
  audit: AuditTrail;
  ownerIdentity: (userId: number) => Promise<Identity | null>;
  /** `scheduleAttachMaxBytes`. */
  attachMaxBytes: number;
  /** Cluster mode: the leases table, this node and the lease's length; null alone. */
  cluster: { leases: LeasesRepository; node: string; leaseMs: number } | null;
  node: string;
  log?: Log;
}

/**
 * The scheduler and a schedule's run (docs/api/schedules.md). Every second, the holder of the
 * `scheduler` lease (any lone server) starts each due schedule's run: it claims the slot
 * (schedule, slot time) in the metadata store first, so a slot runs on exactly one node,
 * then moves `next_run_at` past now, so slots missed while the server was down run once.
 * A run renders the source as its owner as they stand now, stores it as a report, sends
 * it to the schedule's channels and records how it went; nothing in it stops the scheduler.
 */
export class ScheduleRunner {
  private timer: NodeJS.Timeout | undefined;
  private renewer: NodeJS.Timeout | undefined;
  private adopter: NodeJS.Timeout | undefined;
  private ticking = false;
  private closing = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly log: Log;
  /** Runs by `trigger,status`. */
  private readonly runs: Record<string, number> = {
    'cron,ok': 0,
    'cron,failed': 0,
    'manual,ok': 0,
    'manual,failed': 0,
  };
  private readonly runSeconds = new Observations();
  private readonly lateness = new Observations();
  private readonly cachedCounts = cachedFor(STORE_STATS_MS, () => this.d.repo.countByEnabled());

  constructor(private readonly d: ScheduleRunnerDeps) {
    this.log = d.log ?? silentLog;
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_schedule_runs_total',
        'Scheduled report runs, by trigger and status.',
        () => this.runs,
        'trigger,status',
      ),
      gauge(
        'logscope_schedules',
        'Report schedules, by whether they are enabled.',
        () => this.cachedCounts(),
        'enabled',
      ),
      histogram(
        'logscope_schedule_run_seconds',
        'How long scheduled report runs took, rendering and first delivery attempts included.',
        BUCKETS,
        () => this.runSeconds.drain(),
      ),
      histogram(
        'logscope_schedule_lateness_seconds',
        'How late cron runs started after their slot (a slot missed while the server was down counts whole).',
        BUCKETS,
        () => this.lateness.drain(),
      ),
    ];
  }

  /** At start: one server's runs a stopped process left `running` failed; then ticks. */
  async start(): Promise<void> {
    if (!this.d.cluster)
      for (const row of await this.d.repo.running()) {
        const last = scheduleOf(row).lastRun as LastRun;
        await this.d.repo.setLastRun(
          row.id,
          JSON.stringify({ ...last, status: 'failed', error: 'the server stopped during the run' }),
        );
      }
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    const c = this.d.cluster;
    if (c) {
      // This node's runs stay its own while it lives; a dead node's are finished here.
      this.renewer = setInterval(() => {
        this.d.repo.renewRuns(c.node, Date.now() + c.leaseMs).catch(() => undefined);
      }, c.leaseMs / 3).unref();
      this.adopter = setInterval(() => void this.adopt().catch(() => undefined), ADOPT_EVERY_MS).unref();
    }
    void this.tick();
  }

  /**
   * Cluster: takes over a run whose node died (its lease ran out) and finishes it here as
   * the owner: its report (adopted and rendered by the reports feature when it was not
   * READY) is awaited, and sent where it was not yet. True when one was taken.
   */
  async adopt(): Promise<boolean> {
    const c = this.d.cluster;
    if (!c || this.closing) return false;
    const row = await this.d.repo.adoptRun(c.node, Date.now(), Date.now() + c.leaseMs);
    if (!row) return false;
    const run = scheduleOf(row).lastRun as LastRun;
    const owner = await this.d.ownerIdentity(row.owner_id);
    const actor = {
      user_id: row.owner_id,
      username: owner?.username ?? null,
      token_key_id: null,
      address: null,
    };
    this.track(this.execute(row, run, actor));
    return true;
  }

  async stop(graceMs = 5000): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    clearInterval(this.renewer);
    clearInterval(this.adopter);
    if (this.d.cluster)
      await this.d.cluster.leases.release(SCHEDULER_LEASE, this.d.cluster.node).catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.inFlight),
      new Promise((r) => {
        timer = setTimeout(r, graceMs);
      }),
    ]);
    clearTimeout(timer);
  }

  /** Resolves once no run is under way (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size) await Promise.all(this.inFlight);
  }

  /** POST /api/schedules/{id}/run: starts a run now (409 while one runs), not moving next_run_at. */
  async runNow(who: Identity, id: number, address: string | null): Promise<Schedule> {
    const row = await this.d.schedules.visible(who, id);
    const actor = { user_id: who.userId, username: who.username, token_key_id: who.keyId, address };
    const lastRun = await this.begin(row, 'manual');
    if (!lastRun) throw new AppError(409, 'run_in_progress', 'A run of this schedule is still going.');
    this.track(this.execute(row, lastRun, actor));
    return presentSchedule({ ...row, last_run: JSON.stringify(lastRun) });
  }

  private track(run: Promise<void>): void {
    const p = run.finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  /** Starts due runs, if this node is the scheduler. */
  async tick(): Promise<void> {
    if (this.ticking || this.closing) return;
    this.ticking = true;
    try {
      const now = Date.now();
      const c = this.d.cluster;
      if (c && !(await c.leases.hold(SCHEDULER_LEASE, c.node, now, c.leaseMs))) return;
      for (const row of await this.d.repo.due(now)) {
        if (this.closing) return;
        await this.startDue(row, now).catch((err: unknown) =>
          this.log.error({ err: String(err), schedule_id: row.id }, 'scheduled run not started'),
        );
      }
      if (Math.random() < 0.001) await this.d.repo.forgetClaims(now - KEEP_CLAIMS_MS);
    } catch (err) {
      this.log.warn({ err: String(err) }, 'scheduler tick failed');
    } finally {
      this.ticking = false;
    }
  }

  private async startDue(row: ScheduleRow, now: number): Promise<void> {
    const slot = row.next_run_at as number;
    const next = this.d.schedules.nextSlot(row, now);
    const claimed = await this.d.repo.claim(row.id, slot, this.d.node);
    // Claimed or not, the slot is past: the next is after now (so missed slots run once).
    await this.d.repo.advance(row.id, slot, next);
    if (!claimed) return;
    // A disabled owner's schedules pause: their slots pass without a run (the release gate
    // says who may still send anything).
    if (await this.d.releaseGate.refusal({ principal: row.owner_id })) return;
    const lastRun = await this.begin(row, 'cron');
    if (!lastRun) {
      this.log.warn({ schedule_id: row.id }, 'scheduled slot skipped: a manual run is still going');
      return;
    }
    this.lateness.observe(Math.max(0, Date.now() - slot) / 1000);
    const missed =
      now - slot > MISSED_AFTER_MS ? this.d.schedules.slotsBetween(row, slot - 1, now) : undefined;
    const owner = await this.d.ownerIdentity(row.owner_id);
    const actor = {
      user_id: row.owner_id,
      username: owner?.username ?? null,
      token_key_id: null,
      address: null,
    };
    this.track(this.execute(row, lastRun, actor, missed));
  }

  /** Marks a run started; null when one is still going. */
  private async begin(row: ScheduleRow, trigger: 'cron' | 'manual'): Promise<LastRun | null> {
    const lastRun: LastRun = {
      at: new Date().toISOString(),
      trigger,
      status: 'running',
      report_id: null,
      error: null,
      deliveries: [],
    };
    const c = this.d.cluster;
    const lease = c ? { node: c.node, until: Date.now() + c.leaseMs } : undefined;
    return (await this.d.repo.setLastRun(row.id, JSON.stringify(lastRun), true, lease)) ? lastRun : null;
  }

  private async execute(row: ScheduleRow, run: LastRun, actor: RunActor, missed?: number): Promise<void> {
    const started = performance.now();
    try {
      await this.render(row, run);
    } catch (err) {
      run.status = 'failed';
      if (err instanceof RunError || err instanceof AppError) run.error = err.message;
      else {
        this.log.error({ err, schedule_id: row.id }, 'scheduled run failed');
        run.error = 'internal error; the server log has the details';
      }
    }
    if (run.status === 'running') run.status = 'ok';
    await this.d.repo.setLastRun(row.id, JSON.stringify(run)).catch(() => undefined);
    await this.d.reports
      .prune(row.id, row.keep_reports)
      .catch((err: unknown) =>
        this.log.warn({ err: String(err), schedule_id: row.id }, 'old reports not pruned'),
      );
    this.runSeconds.observe((performance.now() - started) / 1000);
    const key = `${run.trigger},${run.status === 'ok' ? 'ok' : 'failed'}`;
    this.runs[key] = (this.runs[key] ?? 0) + 1;
    this.d.audit.record({
      at: new Date(run.at),
      actor,
      action: 'schedule.run',
      target: { kind: 'schedule', id: String(row.id) },
      detail: {
        trigger: run.trigger,
        report_id: run.report_id,
        status: run.status,
        error: run.error,
        ...(missed !== undefined ? { missed } : {}),
        seconds: Math.round(performance.now() - started) / 1000,
      },
      outcome: run.status === 'ok' ? 'ok' : 'error',
    });
  }

  /** Renders the report as the owner now is, then delivers it; fills `run` as it goes. */
  private async render(row: ScheduleRow, run: LastRun): Promise<void> {
    const s = scheduleOf(row);
    const at = Date.parse(run.at);
    const owner = await this.d.ownerIdentity(row.owner_id);
    if (!owner) throw new RunError('the owner no longer exists');
    const local = localDateTime(new Date(at), row.time_zone);
    let range: { ts_from: number; ts_to: number } | null;
    let about: string;
    if (run.report_id === null) ({ range, about } = await this.newReport(row, run, owner, local));
    else {
      // Taken over from a node that died: its report is finished as any report is.
      const kept = (await this.d.reports.get(owner, run.report_id).catch(() => undefined))?.source as
        | { time_range?: RunRange; query?: { params?: { time_range?: RunRange } } }
        | undefined;
      range = kept?.query?.params?.time_range ?? kept?.time_range ?? null;
      about =
        'saved_search_id' in s.source
          ? `saved search ${s.source.saved_search_id}`
          : `dashboard ${s.source.dashboard_id}`;
    }
    const report = await this.d.reports.settled(run.report_id as number);
    if (!report) throw new RunError('the report was deleted during the run');
    if (report.status !== 'READY')
      throw new RunError(`the report failed: ${report.error ?? 'no reason given'}`);
    const rangeText = range
      ? `${localDateTime(new Date(range.ts_from * 1000), row.time_zone)} to ${localDateTime(new Date(range.ts_to * 1000), row.time_zone)} (${row.time_zone})`
      : null;
    await deliverRun(
      {
        ...this.d,
        save: (r) => this.d.repo.setLastRun(row.id, JSON.stringify(r)).then(() => undefined),
        closing: () => this.closing,
      },
      row,
      s.deliverTo,
      run,
      report,
      { source: about, local_time: local, range: rangeText, timeRange: range },
    );
  }

  /** Resolves the source and range at the run's start and creates the report as the owner. */
  private async newReport(
    row: ScheduleRow,
    run: LastRun,
    owner: Identity,
    local: string,
  ): Promise<{ range: RunRange | null; about: string }> {
    const s = scheduleOf(row);
    const at = Date.parse(run.at);
    const resolve = (preset: { preset: string }) => {
      const w = resolveTimeRange(preset, at);
      return { ts_from: Math.floor(w.fromMs / 1000), ts_to: Math.ceil(w.toMs / 1000) };
    };
    let source: ReportSource;
    let range: { ts_from: number; ts_to: number } | null;
    let about: string;
    if ('saved_search_id' in s.source) {
      const id = s.source.saved_search_id;
      const search = await this.d.savedSearches.get(owner, id).catch((err: unknown) => {
        if (err instanceof AppError && err.status === 404)
          throw new RunError(`saved search ${id} no longer exists or its owner cannot see it`);
        throw err;
      });
      const own = s.timeRange ?? search.time_range;
      range = 'preset' in own ? resolve(own) : own;
      source = {
        kind: 'query',
        query: {
          type: 'Search',
          params: {
            query: search.query,
            filter: search.filter,
            time_range: range,
            sort: search.sort,
            ...(search.streams ? { streams: search.streams } : {}),
          },
        },
      };
      about = `saved search "${search.title}" (${id})`;
    } else {
      range = s.timeRange ? resolve(s.timeRange) : null;
      source = {
        kind: 'dashboard',
        dashboard_id: s.source.dashboard_id,
        ...(range ? { time_range: range } : {}),
      };
      about = `dashboard ${s.source.dashboard_id}`;
    }
    const created = await this.d.reports
      .create(owner, {
        title: `${row.name} ${local}`,
        ftype: row.format,
        source,
        timezone: row.time_zone,
        schedule_id: row.id,
      })
      .catch((err: unknown) => {
        if (err instanceof AppError && err.status === 400)
          throw new RunError(`the source can no longer be rendered: ${err.message}`);
        throw err;
      });
    run.report_id = created.id;
    await this.d.repo.setLastRun(row.id, JSON.stringify(run));
    return { range, about };
  }
}
