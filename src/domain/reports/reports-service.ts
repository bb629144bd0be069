import { createWriteStream, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page, PageRequest } from '../../core/list.js';
import type { ProblemLog } from '../../core/problems.js';
import { AppError, conflict, fieldError, notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { renderChart } from '../../export/charts.js';
import { EXPORT_FORMATS, type ExportFormat, parseExportFormat } from '../../export/export-format.js';
import type { ExportSection } from '../../export/renderer.js';
import { RENDERERS } from '../../export/renderers.js';
import { isValidTimeZone } from '../../export/time-format.js';
import type { ReportsRepository } from '../../metadata/reports-repository.js';
import type { ReportRow } from '../../metadata/schema.js';
import { exportTable } from '../../query/export-tables.js';
import type { QueryRunner } from '../../query/runner.js';
import { validateQuery } from '../../query/validate.js';
import type { Identity } from '../auth/identity.js';
import { chartFor } from './report-charts.js';

/** ShortReport (API.md §6). */
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
}

export type ReportSource =
  | { kind: 'query'; query: { type: string; params?: object | undefined } }
  | { kind: 'dashboard'; dashboard_id: number };

export interface NewReport {
  title?: string | undefined;
  ftype: string;
  source: ReportSource;
  timezone?: string | undefined;
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
      visualization?: { kind?: string };
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
});

/**
 * Reports: a query's or a dashboard's results rendered to a file in the background.
 * Files live in `<data_dir>/reports/<id>.<ext>` and are deleted with the report.
 */
export class ReportsService {
  private readonly dir: string;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly repo: ReportsRepository,
    private readonly runner: QueryRunner,
    private readonly store: EventStore,
    private readonly dashboards: DashboardReader | null,
    private readonly opts: { dataDir: string; maxRows: number; problems?: ProblemLog },
  ) {
    this.dir = path.join(opts.dataDir, 'reports');
  }

  private visible(who: Identity, row: ReportRow | undefined): ReportRow {
    if (!row || (row.owner_id !== who.userId && !who.isAdmin)) throw notFound('No such report.');
    return row;
  }

  fileOf(row: Pick<ReportRow, 'id' | 'ftype'>): string {
    return path.join(this.dir, `${row.id}.${RENDERERS[row.ftype as ExportFormat].ext}`);
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
    });
    const job = this.generate(who, row).finally(() => this.inFlight.delete(job));
    this.inFlight.add(job);
    return present(row);
  }

  /** Reports a stopped process left PENDING will never finish: say so. */
  failPendingFromEarlierRun(): Promise<void> {
    return this.repo.failPending('The server stopped while the report was being generated; create it again.');
  }

  /** Waits for reports being generated (shutdown, tests). */
  async idle(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  private async generate(who: Identity, row: ReportRow): Promise<void> {
    const file = this.fileOf(row);
    try {
      mkdirSync(this.dir, { recursive: true });
      const source = JSON.parse(row.source) as ReportSource;
      const sections: ExportSection[] = [];
      if (source.kind === 'query') {
        sections.push(...(await this.sectionsFor(who, row, source.query, undefined, source.query.type)));
      } else {
        const d = await (this.dashboards as DashboardReader).reportable(who, source.dashboard_id);
        for (const w of d.widgets) {
          sections.push(...(await this.sectionsFor(who, row, w.query, w.visualization?.kind, w.title)));
        }
      }
      const renderer = RENDERERS[row.ftype as ExportFormat];
      await renderer.render(
        { title: row.title, timezone: row.timezone, generatedAt: new Date(), sections },
        createWriteStream(file),
      );
      await this.repo.finish(row.id, { status: 'READY', size: statSync(file).size });
    } catch (err) {
      rmSync(file, { force: true });
      // Our own errors speak to the user; anything else (engine text) goes to the log.
      if (!(err instanceof AppError)) this.opts.problems?.report(err, { report_id: row.id });
      const error =
        err instanceof AppError
          ? err.message
          : 'The report could not be generated because of an internal error; the server log has the details.';
      await this.repo.finish(row.id, { status: 'ERROR', error }).catch(() => undefined);
    }
  }

  /** One query's sections: a chart for aggregations (where the format has room) and its table. */
  private async sectionsFor(
    who: Identity,
    report: ReportRow,
    query: { type: string; params?: unknown },
    visualization: string | undefined,
    title: string,
  ): Promise<ExportSection[]> {
    const valid = validateQuery({ type: query.type, params: query.params ?? {} });
    const id = `report-${report.id}-${Math.random().toString(36).slice(2)}`;
    const now = new Date().toISOString();
    const job = this.runner.start(
      {
        query_id: id,
        owner_id: who.userId,
        type: valid.type,
        params: JSON.stringify(valid.params),
        created_at: now,
        last_used_at: now,
      },
      valid.filter,
    );
    try {
      await job.running;
      if (job.status !== 'SUCCESS')
        throw new Error(`query "${title}" ended ${job.status}: ${job.error ?? ''}`);
      const results = await this.runner.present(job, {});
      const table = exportTable(job, results, this.store, this.opts.maxRows);
      table.title = title;
      const sections: ExportSection[] = [];
      const chart = chartFor(job.type, results, title, visualization);
      if (chart?.points.length) {
        const img = await renderChart(chart);
        sections.push({ kind: 'image', title, png: img.png, width: img.width, height: img.height });
      }
      sections.push({ kind: 'table', table });
      return sections;
    } finally {
      this.runner.forget(id);
    }
  }

  async list(who: Identity, page: PageRequest): Promise<Page<ShortReport>> {
    const res = await this.repo.list(who.isAdmin ? undefined : who.userId, page);
    return { count: res.count, rows: res.rows.map(present) };
  }

  async get(who: Identity, id: number): Promise<ShortReport> {
    return present(this.visible(who, await this.repo.byId(id)));
  }

  /** The file of a READY report (409 before). */
  async file(who: Identity, id: number): Promise<{ path: string; report: ShortReport; mediaType: string }> {
    const row = this.visible(who, await this.repo.byId(id));
    if (row.status !== 'READY') {
      throw conflict(
        row.status === 'PENDING' ? 'The report is still being generated.' : `The report failed: ${row.error}`,
      );
    }
    return {
      path: this.fileOf(row),
      report: present(row),
      mediaType: RENDERERS[row.ftype as ExportFormat].mediaType,
    };
  }

  async delete(who: Identity, id: number): Promise<void> {
    const row = this.visible(who, await this.repo.byId(id));
    await this.repo.delete(row.id);
    rmSync(this.fileOf(row), { force: true });
  }
}
