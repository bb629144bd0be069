import type { Identity } from '../../core/identity.js';
import { AppError } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { SearchResult } from '../../event-store/query-plan.js';
import type { ExportSection, ExportTable } from '../../export/renderer.js';
import { exportTable } from '../../query/export-tables.js';
import type { ReadAudit } from '../../query/read-audit.js';
import type { ReadScopes } from '../../query/read-scopes.js';
import type { QueryRunner } from '../../query/runner.js';
import { resolveTimeRange } from '../../query/time-range.js';
import type { MetricAnswers, MetricParams } from '../../query/types/metric.js';
import { validateQuery } from '../../query/validate.js';
import type { ResultEnricher } from '../events/index.js';
import { chartFor, noMapNotes } from './report-charts.js';
import { periodLabel, type ReportParams, widgetNotes, widgetTable } from './report-widgets.js';
import type { ReportRow } from './reports-table.js';

/** Formats made to be read page by page, where a Timeline is a chart and a summary. */
const DOCUMENT_FORMATS: ReadonlySet<string> = new Set(['pdf', 'docx']);

/** What a report's sections are computed with. */
export interface SectionDeps {
  runner: QueryRunner;
  store: EventStore;
  /** What the report's owner may read. */
  scopes: ReadScopes;
  /** Most rows a report's table holds; beyond it the table is cut and says so in a note. */
  maxRows: number;
  /** Adds GeoIP data to a map widget's values. */
  enricher?: ResultEnricher | undefined;
  /** What checks Metric queries (the log-metrics feature): the owner must see the metric. */
  metrics?: MetricAnswers | undefined;
  /** Each section's query is recorded here as its owner's read (`via: report`, docs/api/audit.md). */
  audit: ReadAudit;
}

/**
 * One query's section: its title once, the lines stating its query and time range, a
 * chart for aggregations (where the format has room) and its table. A dashboard widget
 * shows what the widget shows: a Search its page of `page_size` events, a TopN its n
 * values, a Timeline a chart and a summary of a few rows. A query report's Search holds
 * every matching event up to `maxRows` instead (it is an export with a title page), and
 * its Timeline every bucket unless the format is a document (pdf, docx).
 */
export async function reportSection(
  deps: SectionDeps,
  who: Identity,
  report: ReportRow,
  query: { type: string; params?: unknown },
  shown: { kind?: string | undefined; options?: Record<string, unknown> | undefined } | undefined,
  title: string,
  widget: boolean,
): Promise<ExportSection> {
  const valid = validateQuery({ type: query.type, params: query.params ?? {} });
  const visualization = shown?.kind;
  // A Metric query's metric must be one the owner may see (a deleted one ends ERROR naming it).
  if (valid.type === 'Metric' && deps.metrics)
    await deps.metrics.check(
      who,
      valid.params as MetricParams,
      resolveTimeRange(valid.params.time_range, Date.now()),
      true,
    );
  const id = `report-${report.id}-${Math.random().toString(36).slice(2)}`;
  const now = new Date().toISOString();
  // As its owner: their read scope, and `streams` among the streams they may read.
  const [scope, filter] = await Promise.all([
    deps.scopes.ofUser(who.userId),
    deps.scopes.narrow(who.userId, valid.filter, valid.params.streams),
  ]);
  const job = deps.runner.start(
    {
      query_id: id,
      owner_id: who.userId,
      type: valid.type,
      params: JSON.stringify(valid.params),
      created_at: now,
    },
    filter,
    scope,
    { internal: true },
  );
  const read = {
    who,
    origin: { via: 'report', address: null },
    action: 'query.create',
    target: { kind: 'query', id },
    detail: {
      report_id: report.id,
      type: valid.type,
      query: valid.params.query ?? '',
      filter: valid.params.filter ?? [],
      time_range: valid.params.time_range ?? null,
      streams: valid.params.streams ?? null,
    },
  } as const;
  try {
    try {
      await job.running;
    } finally {
      // Recorded once it ran (its outcome and count known), as POST /api/query is.
      const total =
        job.status === 'SUCCESS' && job.type === 'Search' ? (job.results as SearchResult).total : null;
      deps.audit.read({
        ...read,
        detail: { ...read.detail, result_count: total },
        outcome: job.status === 'SUCCESS' ? 'ok' : 'error',
      });
    }
    // job.error is already a message for users (never engine text).
    if (job.status === 'ERROR') throw new AppError(500, 'report_failed', `Query "${title}": ${job.error}`);
    if (job.status !== 'SUCCESS') throw new Error(`query "${title}" ended ${job.status}`);
    let results = await deps.runner.present(job, {});
    // A map places its values by GeoIP, as the dashboard's map widget does.
    if (visualization === 'map' && (job.type === 'TopN' || job.type === 'LastN') && deps.enricher)
      results = await deps.enricher.enrich(job.type, results, { addGeoipData: true }, job.params);
    const params = job.params as ReportParams;
    const tz = report.timezone;
    const notes = widgetNotes(job.type, params, job.window, tz, results);
    const period = periodLabel(params.time_range, job.window, tz);
    let table: ExportTable;
    if (job.type === 'Search') {
      const pageSize = params.page_size ?? deps.maxRows;
      const cap = widget ? Math.min(pageSize, deps.maxRows) : deps.maxRows;
      table = exportTable(job, results, deps.store, cap);
      const total = (job.results as SearchResult).total;
      // A query report may run to its page cap: it says up front how much there is.
      if (!widget) notes.push(`${countText(total)} events match.`);
      table.footnotes = [];
      if (total > cap)
        table.footnotes.push(
          widget && cap === pageSize
            ? `Showing the first ${countText(cap)} of ${countText(total)} matching events: the widget shows ${countText(pageSize)} a page.`
            : `Truncated: the first ${countText(cap)} of ${countText(total)} matching events (exportMaxRows).`,
        );
    } else if (job.type === 'Timeline' && !widget && !DOCUMENT_FORMATS.has(report.ftype)) {
      // A query report in a data format (csv, json, xlsx) holds every bucket.
      table = exportTable(job, results, deps.store, deps.maxRows);
    } else {
      const t = widgetTable(job.type, results, params);
      if (!t) throw new Error(`no report table for a ${job.type}`);
      table = { title, columns: t.columns, rows: fromArray(t.rows), footnotes: t.footnotes };
    }
    table.title = title;
    table.notes = notes;
    table.period = period;
    const y = typeof shown?.options?.y === 'string' ? shown.options.y : undefined;
    const chart = chartFor(job.type, results, title, visualization, {
      timezone: tz,
      window: job.window,
      ...(y ? { y } : {}),
    });
    // A map is drawn even when it places no country: its notes say why.
    if (chart && (chart.chart.points.length || chart.chart.kind === 'map')) {
      // Loaded on the first chart: vega and resvg take a while to load, and most runs draw none.
      const { renderChart } = await import('../../export/charts.js');
      const img = await renderChart(chart.chart);
      table.chart = {
        png: img.png,
        svg: img.svg,
        width: img.width,
        height: img.height,
        description: title,
      };
      notes.push(...chart.notes);
    } else if (!chart) notes.push(...noMapNotes(job.type, results, visualization));
    return { kind: 'table', table };
  } finally {
    deps.runner.forget(id);
  }
}

async function* fromArray(rows: Array<Record<string, unknown>>) {
  yield* rows;
}

const countText = (n: number) => n.toLocaleString('en-US');
