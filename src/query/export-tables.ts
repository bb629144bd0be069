import type { StoredEvent } from '../core/event.js';
import { presentEvent } from '../core/present-event.js';
import { typedFields } from '../core/record-shape.js';
import type { EventStore } from '../event-store/event-store.js';
import type { ExportColumn, ExportTable } from '../export/renderer.js';
import type { QueryJob } from './job.js';
import { parseSort, type SearchParams } from './types/search.js';
import type { SummaryParams } from './types/summary.js';

const EVENT_COLUMNS: ExportColumn[] = [
  { key: 'ts', title: 'time', kind: 'time' },
  { key: 'host', title: 'host', kind: 'string' },
  { key: 'app', title: 'app', kind: 'string' },
  { key: 'severity', title: 'severity', kind: 'string' },
  { key: 'message', title: 'message', kind: 'string' },
  { key: 'src_ip', title: 'src_ip', kind: 'string' },
  { key: 'src_port', title: 'src_port', kind: 'number' },
  { key: 'dst_ip', title: 'dst_ip', kind: 'string' },
  { key: 'dst_port', title: 'dst_port', kind: 'number' },
  { key: 'user', title: 'user', kind: 'string' },
  { key: 'action', title: 'action', kind: 'string' },
  { key: 'status', title: 'status', kind: 'number' },
  { key: 'bytes', title: 'bytes', kind: 'number' },
  { key: 'facility', title: 'facility', kind: 'string' },
  { key: 'source', title: 'source', kind: 'string' },
  { key: 'intake', title: 'intake', kind: 'string' },
  { key: 'fields', title: 'fields', kind: 'json' },
  { key: 'ev_id', title: 'ev_id', kind: 'string' },
];
const TIME_FIELDS = new Set(['ts', 'received_at', 'stored_at']);

async function* eventRows(events: AsyncIterable<StoredEvent>, projection: string[] | undefined) {
  for await (const e of events) {
    if (!projection) {
      const fields = typedFields(e.fields, e.shape);
      yield { ...presentEvent({ ...e, fields: {} }), fields: Object.keys(fields).length ? fields : null };
    } else {
      const p = presentEvent(e);
      yield Object.fromEntries(projection.map((f) => [f, p[f] ?? null]));
    }
  }
}

async function* fromArray(rows: Array<Record<string, unknown>>) {
  yield* rows;
}

/**
 * The table an export of a query holds. A Search streams every matching event from the
 * store (not only the fetched page), up to `maxRows`; the other types export their
 * computed results.
 */
export function exportTable(
  job: QueryJob,
  results: unknown,
  store: EventStore,
  maxRows: number,
): ExportTable {
  const title = `${job.type} ${job.id}`;
  switch (job.type) {
    case 'Search': {
      const p = job.params as SearchParams;
      const projection = p.fields;
      const columns: ExportColumn[] = projection
        ? ['ts', ...projection.filter((f) => f !== 'ts')].map((f) => ({
            key: f,
            title: f,
            kind: TIME_FIELDS.has(f) ? 'time' : 'string',
          }))
        : EVENT_COLUMNS;
      const rows = eventRows(
        store.stream(
          {
            kind: 'search',
            filter: job.filter,
            scope: job.scope,
            range: job.window,
            sort: parseSort(p.sort),
            limit: maxRows,
            offset: 0,
            count: false,
          },
          { tag: job.id },
        ),
        projection ? columns.map((c) => c.key) : undefined,
      );
      return { title, columns, rows };
    }
    case 'TopN': {
      const r = results as { items: Array<Record<string, unknown>> };
      return {
        title,
        columns: [
          { key: 'value', title: 'value', kind: 'string' },
          { key: 'count', title: 'count', kind: 'number' },
          { key: 'share', title: 'share', kind: 'number' },
        ],
        rows: fromArray(r.items ?? []),
      };
    }
    case 'LastN': {
      const r = results as { items: Array<Record<string, unknown>> };
      return {
        title,
        columns: [
          { key: 'value', title: 'value', kind: 'string' },
          { key: 'last_seen', title: 'last seen', kind: 'time' },
          { key: 'first_seen', title: 'first seen', kind: 'time' },
          { key: 'count', title: 'count', kind: 'number' },
        ],
        rows: fromArray(r.items ?? []),
      };
    }
    case 'Summary': {
      const r = results as { totals: Record<string, unknown>; details: Array<Record<string, unknown>> };
      const groupBy = (job.params as SummaryParams).group_by;
      const metricKeys = Object.keys(r.totals ?? {});
      const columns: ExportColumn[] = [
        ...groupBy.map((g) => ({ key: `group.${g}`, title: g, kind: 'string' as const })),
        ...metricKeys.map((k) => ({ key: k, title: k, kind: 'number' as const })),
      ];
      const total = { ...Object.fromEntries(groupBy.map((g) => [`group.${g}`, '(total)'])), ...r.totals };
      const details = (r.details ?? []).map((d) => {
        const group = d.group as Record<string, unknown>;
        return { ...Object.fromEntries(groupBy.map((g) => [`group.${g}`, group[g]])), ...d };
      });
      return { title, columns, rows: fromArray([total, ...details]) };
    }
    case 'Timeline': {
      const r = results as { buckets: Array<{ ts: number; count: number; series?: Record<string, number> }> };
      const series = Object.keys(r.buckets?.[0]?.series ?? {});
      return {
        title,
        columns: [
          { key: 'ts', title: 'time', kind: 'time' },
          { key: 'count', title: 'count', kind: 'number' },
          ...series.map((s) => ({ key: `series.${s}`, title: s, kind: 'number' as const })),
        ],
        rows: fromArray(
          (r.buckets ?? []).map((b) => ({
            ts: b.ts,
            count: b.count,
            ...Object.fromEntries(series.map((s) => [`series.${s}`, b.series?.[s] ?? 0])),
          })),
        ),
      };
    }
    case 'Patterns': {
      const r = results as { patterns: Array<Record<string, unknown>> };
      return {
        title,
        columns: [
          { key: 'pattern_id', title: 'pattern', kind: 'string' },
          { key: 'template', title: 'template', kind: 'string' },
          { key: 'count', title: 'count', kind: 'number' },
          { key: 'share', title: 'share', kind: 'number' },
          { key: 'first_seen', title: 'first seen', kind: 'time' },
          { key: 'last_seen', title: 'last seen', kind: 'time' },
          { key: 'new', title: 'new', kind: 'string' },
          { key: 'previous_count', title: 'previous count', kind: 'number' },
          // One row per template text: the apps its events came from, and every id of it.
          { key: 'apps', title: 'apps', kind: 'json' },
          { key: 'apps_other', title: 'more apps', kind: 'number' },
          { key: 'pattern_ids', title: 'pattern ids', kind: 'json' },
        ],
        rows: fromArray(r.patterns ?? []),
      };
    }
    case 'Explain': {
      // One row a change: its term names it (pattern or field value), its template when a pattern.
      const r = results as { changes: Array<Record<string, unknown>> };
      return {
        title,
        columns: [
          { key: 'kind', title: 'kind', kind: 'string' },
          { key: 'term', title: 'term', kind: 'string' },
          { key: 'template', title: 'template', kind: 'string' },
          { key: 'direction', title: 'direction', kind: 'string' },
          { key: 'focus_count', title: 'focus count', kind: 'number' },
          { key: 'baseline_count', title: 'baseline count', kind: 'number' },
          { key: 'focus_rate', title: 'focus rate /min', kind: 'number' },
          { key: 'baseline_rate', title: 'baseline rate /min', kind: 'number' },
          { key: 'ratio', title: 'ratio', kind: 'number' },
          { key: 'score', title: 'score', kind: 'number' },
        ],
        rows: fromArray(r.changes ?? []),
      };
    }
    case 'Table': {
      // The table as computed (at most 10,000 rows), its cells keyed by position.
      const r = results as { columns: Array<{ name: string; type: string }>; rows: unknown[][] };
      return {
        title,
        columns: (r.columns ?? []).map((c, i) => ({
          key: `c${i}`,
          title: c.name,
          kind:
            c.type === 'time'
              ? ('time' as const)
              : c.type === 'number'
                ? ('number' as const)
                : ('string' as const),
        })),
        rows: fromArray((r.rows ?? []).map((row) => Object.fromEntries(row.map((v, i) => [`c${i}`, v])))),
      };
    }
    case 'Metric': {
      // One row a series' point: its time, a column a label, then the figures its kind has.
      const r = results as {
        metric: { kind: string };
        labels: string[];
        series: Array<{ labels: Record<string, string>; points: Array<Record<string, unknown>> }>;
      };
      const quantiles = Object.keys(r.series?.[0]?.points?.[0]?.quantiles ?? {});
      const figures = r.metric?.kind === 'count' ? [] : ['count', 'sum', 'min', 'max', 'avg'];
      return {
        title,
        columns: [
          { key: 'ts', title: 'time', kind: 'time' },
          ...(r.labels ?? []).map((l) => ({ key: `label.${l}`, title: l, kind: 'string' as const })),
          { key: 'events', title: 'events', kind: 'number' },
          ...figures.map((f) => ({ key: f, title: f, kind: 'number' as const })),
          ...quantiles.map((q) => ({ key: `q.${q}`, title: `quantile ${q}`, kind: 'number' as const })),
          { key: 'value', title: 'value', kind: 'number' },
        ],
        rows: fromArray(
          (r.series ?? []).flatMap((s) =>
            s.points.map((pt) => ({
              ...pt,
              ...Object.fromEntries((r.labels ?? []).map((l) => [`label.${l}`, s.labels[l] ?? ''])),
              ...Object.fromEntries(
                quantiles.map((q) => [
                  `q.${q}`,
                  (pt.quantiles as Record<string, unknown> | undefined)?.[q] ?? null,
                ]),
              ),
            })),
          ),
        ),
      };
    }
    default:
      return job.type satisfies never;
  }
}
