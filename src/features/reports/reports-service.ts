import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Identity } from '../../core/identity.js';
import type { Page, PageRequest } from '../../core/list.js';
import type { Log } from '../../core/log.js';
import { cachedFor, gauge, type MetricDecl, STORE_STATS_MS } from '../../core/metrics.js';
import { AppError, conflict, fieldError, notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { EXPORT_FORMATS, type ExportFormat, parseExportFormat } from '../../export/export-format.js';
import type { ExportSection } from '../../export/renderer.js';
import { RENDERERS } from '../../export/renderers.js';
import { isValidTimeZone } from '../../export/time-format.js';
import type { ReadAudit } from '../../query/read-audit.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { QueryRunner } from '../../query/runner.js';
import type { TimeRangeParam } from '../../query/time-range.js';
import type { MetricAnswers } from '../../query/types/metric.js';
import { validateQuery } from '../../query/validate.js';
import type { ResultEnricher } from '../events/index.js';
import type { ReportFiles, ReportSink } from './report-files.js';
import { reportSection, type SectionDeps } from './report-section.js';
import type { ReportsRepository } from './reports-repository.js';
import type { ReportRow } from './reports-table.js';

/**
 * Most pages a pdf or docx report takes (about a minute's reading per page is already a
 * long report): what does not fit is left out, and the last page says what.
 */
export const REPORT_MAX_PAGES = 50;

/** ShortReport. */
export interface ShortReport {
  id: number;
  title: string;
  ftype: string;
  status: 'PENDING' | 'READY' | 'ERROR';
  size: number;
  filename: string;
  source: unknown;
  timezone: string;
  owner: number;
  created_at: string;
  error: string | null;
  /** The schedule whose run made it; null: made on request. */
  schedule_id: number | null;
}

export type ReportSource =
  | { kind: 'query'; query: { type: string; params?: object | undefined } }
  | {
      kind: 'dashboard';
      dashboard_id: number;
      /** Replaces every widget's range (a schedule's `time_range`, resolved at its run's start). */
      time_range?: TimeRangeParam;
    };

export interface NewReport {
  title?: string | undefined;
  ftype: string;
  source: ReportSource;
  timezone?: string | undefined;
  /** A schedule's run makes it (docs/api/schedules.md). */
  schedule_id?: number;
}

/** The widgets of a dashboard the caller may see (provided by the dashboards service). */
export interface DashboardReader {
  reportable(
    who: Identity,
    id: number,
  ): Promise<{
    title: string;
    widgets: Array<{
      title: string;
      query: { type: string; params: unknown };
      visualization?: { kind?: string; options?: Record<string, unknown> };
    }>;
  }>;
}

const present = (r: ReportRow): ShortReport => ({
  id: r.id,
  title: r.title,
  ftype: r.ftype,
  status: r.status,
  size: r.size,
  filename: r.filename,
  source: JSON.parse(r.source),
  timezone: r.timezone,
  owner: r.owner_id,
  created_at: r.created_at,
  error: r.error,
  schedule_id: r.schedule_id,
});

export interface ReportsOptions {
  /** Reports read what their owner may read. */
  scopes: ReadScopes;
  /** Checks a Metric widget's metric against the report's owner. */
  metrics?: MetricAnswers | undefined;
  /** Where the files go (the data dir, or the shared store of a cluster). */
  files: ReportFiles;
  /**
   * Cluster mode: this node's id. Each PENDING report is leased to the node generating
   * it (renewed while it works); one whose node died is taken over by another (`adopt`).
   */
  cluster?: {
    node: string;
    leaseMs: number;
    /** Who a report's owner is now (an adopted report is generated as its owner). */
    ownerIdentity: (ownerId: number) => Promise<Identity | null>;
  };
  /** Most rows a report's table holds; beyond it the table is cut and says so in a note. */
  maxRows: number;
  /** Most pages of a pdf or docx report (REPORT_MAX_PAGES by default). */
  maxPages?: number;
  /** Largest report file in bytes; beyond it the report ends ERROR (0: no limit). */
  maxBytes?: number;
  /** Reports of one user generated at once; more wait, PENDING, for a slot. */
  perUser?: number;
  /** Reports generated at once over all users; more wait, PENDING, for a slot. */
  concurrent?: number;
  /** Where a report's internal failure is told (its answer says only that it failed). */
  log?: Log;
  /** Adds GeoIP data to a map widget's values, as GET /api/query does with add_geoip_data. */
  enricher?: ResultEnricher;
  /** Where each report query is recorded as its owner's read (docs/api/audit.md). */
  audit: ReadAudit;
}

interface Queued {
  who: Identity;
  row: ReportRow;
  done: () => void;
}

/**
 * Reports: a query's or a dashboard's results rendered to a file in the background.
 * Files live where `files` keeps them (report-files.ts) and are deleted with the report.
 * At most `perUser` reports of a user and `concurrent` in all are generated at once by
 * one node (the others wait, PENDING, in order); a file is never visible before it is
 * complete.
 */
export class ReportsService {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly queue: Queued[] = [];
  private readonly runningOf = new Map<number, number>();
  private running = 0;

  constructor(
    private readonly repo: ReportsRepository,
    private readonly runner: QueryRunner,
    private readonly store: EventStore,
    private readonly dashboards: DashboardReader | null,
    private readonly opts: ReportsOptions,
  ) {
    const cluster = opts.cluster;
    this.renewer = cluster
      ? setInterval(() => {
          repo.renew(cluster.node, Date.now() + cluster.leaseMs).catch(() => undefined);
        }, cluster.leaseMs / 3).unref()
      : null;
  }

  private readonly renewer: NodeJS.Timeout | null;

  private get sectionDeps(): SectionDeps {
    const { maxRows, enricher, scopes, audit, metrics } = this.opts;
    return { runner: this.runner, store: this.store, scopes, maxRows, enricher, audit, metrics };
  }

  /** Stops renewing this node's leases (closing: what it had not finished goes to the others). */
  close(): void {
    if (this.renewer) clearInterval(this.renewer);
  }

  /**
   * Cluster: takes over a report whose node died (its lease expired) and queues it here,
   * generated from the start as its owner. True when one was taken.
   */
  async adopt(): Promise<boolean> {
    const cluster = this.opts.cluster;
    if (!cluster) return false;
    const row = await this.repo.adoptExpired(cluster.node, Date.now() + cluster.leaseMs);
    if (!row) return false;
    // What the dead node left running on a shared engine stops first (report-section.ts
    // tags a section's statements with its job id, `report-<id>-…`).
    await this.store.abandon(`report-${row.id}-`);
    const who = await cluster.ownerIdentity(row.owner_id);
    if (!who) {
      await this.repo.finish(row.id, { status: 'ERROR', error: 'The report owner no longer exists.' });
      return true;
    }
    this.enqueue(who, row);
    return true;
  }

  private ext(row: Pick<ReportRow, 'ftype'>): string {
    return RENDERERS[row.ftype as ExportFormat].ext;
  }

  private visible(who: Identity, row: ReportRow | undefined): ReportRow {
    if (!row || (row.owner_id !== who.userId && !who.isAdmin)) throw notFound('No such report.');
    return row;
  }

  async create(who: Identity, input: NewReport): Promise<ShortReport> {
    const format = parseExportFormat(input.ftype);
    if (!format) throw fieldError('ftype', `Unknown format; use one of ${EXPORT_FORMATS.join(', ')}.`);
    const timezone = input.timezone ?? 'UTC';
    if (!isValidTimeZone(timezone)) throw fieldError('timezone', `Unknown timezone "${timezone}".`);
    let title = input.title;
    if (input.source.kind === 'query') {
      validateQuery({ type: input.source.query.type, params: input.source.query.params ?? {} });
      title ??= `${input.source.query.type} report`;
    } else {
      if (!this.dashboards) throw fieldError('source', 'Dashboard reports are not available.');
      // Checks the dashboard exists and the caller may see it, before anything is stored.
      // Only "not found" is the caller's mistake; any other failure stays a server error.
      const d = await this.dashboards.reportable(who, input.source.dashboard_id).catch((err: unknown) => {
        throw err instanceof AppError && err.status === 404
          ? fieldError('source.dashboard_id', 'No such dashboard.')
          : err;
      });
      title ??= d.title;
    }
    const stem =
      title
        .replace(/[^\w.\- ]+/g, '_')
        .trim()
        .slice(0, 100) || 'report';
    const row = await this.repo.insert({
      title,
      ftype: format,
      status: 'PENDING',
      size: 0,
      filename: `${stem}.${RENDERERS[format].ext}`,
      source: JSON.stringify(input.source),
      timezone,
      owner_id: who.userId,
      created_at: new Date().toISOString(),
      error: null,
      owner_node: this.opts.cluster?.node ?? null,
      schedule_id: input.schedule_id ?? null,
      lease_until: this.opts.cluster ? Date.now() + this.opts.cluster.leaseMs : 0,
    });
    this.enqueue(who, row);
    return present(row);
  }

  private enqueue(who: Identity, row: ReportRow) {
    const job = new Promise<void>((done) => {
      this.queue.push({ who, row, done });
      this.pump();
    }).finally(() => this.inFlight.delete(job));
    this.inFlight.add(job);
  }

  /** Starts queued reports, in order, while their owner and the server have a free slot. */
  private pump(): void {
    const perUser = this.opts.perUser ?? Number.POSITIVE_INFINITY;
    const total = this.opts.concurrent ?? Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.queue.length && this.running < total; ) {
      const q = this.queue[i] as Queued;
      const mine = this.runningOf.get(q.who.userId) ?? 0;
      if (mine >= perUser) {
        i++;
        continue;
      }
      this.queue.splice(i, 1);
      this.running++;
      this.runningOf.set(q.who.userId, mine + 1);
      void this.generate(q.who, q.row).finally(() => {
        this.running--;
        const left = (this.runningOf.get(q.who.userId) ?? 1) - 1;
        if (left > 0) this.runningOf.set(q.who.userId, left);
        else this.runningOf.delete(q.who.userId);
        q.done();
        this.pump();
      });
    }
  }

  /** Reports of each status, over all users. */
  countByStatus() {
    return this.repo.countByStatus();
  }

  private readonly cachedCounts = cachedFor(STORE_STATS_MS, () => this.repo.countByStatus());

  metrics(): MetricDecl[] {
    return [
      gauge(
        'logscope_reports',
        'Reports kept, by status (PENDING, READY, ERROR).',
        () => this.cachedCounts(),
        'status',
      ),
    ];
  }

  /**
   * At start. One server: reports a stopped process left PENDING will never finish: say
   * so, and delete what they had written. A cluster node leaves them to `adopt` (their
   * node's lease runs out, then a live node generates them).
   */
  async recoverFromEarlierRun(): Promise<void> {
    if (this.opts.cluster) return;
    const pending = await this.repo.pending();
    await this.opts.files.cleanUp(pending.map((r) => ({ id: r.id, ext: this.ext(r) })));
    await this.repo.failPending('The server stopped while the report was being generated; create it again.');
  }

  /** Waits for reports being generated (shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  private async generate(who: Identity, row: ReportRow): Promise<void> {
    let sink: ReportSink | null = null;
    try {
      // Deleted while it waited for a slot: nothing to do.
      if (!(await this.repo.byId(row.id))) return;
      const source = JSON.parse(row.source) as ReportSource;
      const sections: ExportSection[] = [];
      if (source.kind === 'query') {
        sections.push(
          await reportSection(this.sectionDeps, who, row, source.query, undefined, source.query.type, false),
        );
      } else {
        const d = await (this.dashboards as DashboardReader).reportable(who, source.dashboard_id);
        for (const w of d.widgets) {
          const range = source.time_range;
          const query = range
            ? { ...w.query, params: { ...(w.query.params as object), time_range: range } }
            : w.query;
          sections.push(
            await reportSection(this.sectionDeps, who, row, query, w.visualization, w.title, true),
          );
        }
      }
      const renderer = RENDERERS[row.ftype as ExportFormat];
      const maxPages = this.opts.maxPages ?? REPORT_MAX_PAGES;
      const out = await this.opts.files.create(row.id, this.ext(row));
      sink = out;
      await this.write(out, (stream) =>
        renderer.render(
          { title: row.title, timezone: row.timezone, generatedAt: new Date(), sections, maxPages },
          stream,
        ),
      );
      if (!(await this.repo.byId(row.id))) {
        await out.abort();
        return;
      }
      const size = await out.commit();
      await this.repo.finish(row.id, { status: 'READY', size });
    } catch (err) {
      await sink?.abort().catch(() => undefined);
      // Our own errors speak to the user; anything else (engine text) goes to the log.
      if (!(err instanceof AppError)) this.opts.log?.error({ err, report_id: row.id }, 'internal error');
      const error =
        err instanceof AppError
          ? err.message
          : 'The report could not be generated because of an internal error; the server log has the details.';
      await this.repo.finish(row.id, { status: 'ERROR', error }).catch(() => undefined);
    }
  }

  /**
   * Renders into the sink through a byte counter: past `maxBytes` the write fails and the
   * report ends ERROR saying so. Resolves once everything is written.
   */
  private async write(sink: ReportSink, render: (out: Transform) => Promise<unknown>): Promise<void> {
    const max = this.opts.maxBytes || Number.POSITIVE_INFINITY;
    let bytes = 0;
    let tooLarge = false;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        bytes += chunk.length;
        if (bytes > max) {
          tooLarge = true;
          cb(new Error('report too large'));
        } else cb(null, chunk);
      },
    });
    const written = pipeline(counter, sink.stream);
    try {
      await Promise.all([render(counter), written]);
    } catch (err) {
      written.catch(() => undefined);
      counter.destroy();
      if (tooLarge)
        throw new AppError(
          413,
          'report_too_large',
          `The report is larger than ${formatBytes(max)} (reportMaxBytes); narrow its time range or filter, or choose fewer fields.`,
        );
      throw err;
    }
  }

  /** The caller's reports (admins: all), only those `scheduleId` made when it is given. */
  async list(who: Identity, page: PageRequest, scheduleId?: number): Promise<Page<ShortReport>> {
    const res = await this.repo.list(who.isAdmin ? undefined : who.userId, page, scheduleId);
    return { count: res.count, rows: res.rows.map(present) };
  }

  async get(who: Identity, id: number): Promise<ShortReport> {
    return present(this.visible(who, await this.repo.byId(id)));
  }

  /** The file of a READY report (409 before). */
  async file(
    who: Identity,
    id: number,
  ): Promise<{ stream: Readable; report: ShortReport; mediaType: string }> {
    return this.fileOf(this.visible(who, await this.repo.byId(id)));
  }

  private fileOf(row: ReportRow): { stream: Readable; report: ShortReport; mediaType: string } {
    if (row.status !== 'READY') {
      throw conflict(
        row.status === 'PENDING' ? 'The report is still being generated.' : `The report failed: ${row.error}`,
      );
    }
    return {
      stream: this.opts.files.read(row.id, this.ext(row)),
      report: present(row),
      mediaType: RENDERERS[row.ftype as ExportFormat].mediaType,
    };
  }

  async delete(who: Identity, id: number): Promise<void> {
    const row = this.visible(who, await this.repo.byId(id));
    await this.repo.delete(row.id);
    await this.opts.files.delete(row.id, this.ext(row));
  }

  /**
   * The file of a READY report reached through a signed link (checked before: report-links.ts),
   * whoever asks; a deleted report is a 404.
   */
  async fileByLink(id: number): Promise<{ stream: Readable; report: ShortReport; mediaType: string }> {
    const row = await this.repo.byId(id);
    if (!row) throw notFound('No such report.');
    return this.fileOf(row);
  }

  /** A READY report's file whole, for a mail's attachment (null when it is gone). */
  async bytes(id: number): Promise<Buffer | null> {
    const row = await this.repo.byId(id);
    if (row?.status !== 'READY') return null;
    const parts: Buffer[] = [];
    for await (const chunk of this.opts.files.read(row.id, this.ext(row))) parts.push(chunk as Buffer);
    return Buffer.concat(parts);
  }

  /** Waits until report `id` is READY or ERROR (or gone: undefined), looking every `everyMs`. */
  async settled(id: number, everyMs = 100): Promise<ShortReport | undefined> {
    for (;;) {
      const row = await this.repo.byId(id);
      if (!row) return undefined;
      if (row.status !== 'PENDING') return present(row);
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }

  /** Keeps a schedule's newest `keep` reports; older ones are deleted with their files. */
  async prune(scheduleId: number, keep: number): Promise<void> {
    for (const row of await this.repo.olderOfSchedule(scheduleId, keep)) {
      await this.repo.delete(row.id);
      await this.opts.files.delete(row.id, this.ext(row));
    }
  }
}

function formatBytes(n: number): string {
  return n >= 1048576 ? `${Math.round(n / 1048576)} MiB` : `${Math.round(n / 1024)} KiB`;
}
