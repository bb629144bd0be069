import type { ChartData } from '../../export/charts.js';

type Kind = ChartData['kind'];
const CHART_KINDS = new Set<string>(['bar', 'line', 'area', 'pie']);

/**
 * The chart a widget's results make, or null when they read better as a table (a
 * Search, a LastN, a Summary without groups, or a table/number/list/map visualization).
 */
export function chartFor(
  type: string,
  results: unknown,
  title: string,
  visualization: string | undefined,
): ChartData | null {
  if (visualization && !CHART_KINDS.has(visualization)) return null;
  const r = results as Record<string, unknown>;
  switch (type) {
    case 'TopN': {
      const items = (r.items ?? []) as Array<{ value: unknown; count: number }>;
      return {
        kind: (visualization as Kind) ?? 'bar',
        title,
        temporal: false,
        points: items.map((i) => ({ x: String(i.value), y: i.count })),
      };
    }
    case 'Timeline': {
      const buckets = (r.buckets ?? []) as Array<{
        ts: number;
        count: number;
        series?: Record<string, number>;
      }>;
      const kind = (visualization as Kind) ?? 'line';
      const points = buckets.flatMap((b) =>
        b.series
          ? Object.entries(b.series).map(([series, y]) => ({ x: b.ts, y, series }))
          : [{ x: b.ts, y: b.count }],
      );
      return { kind: kind === 'pie' ? 'line' : kind, title, temporal: true, points };
    }
    case 'Summary': {
      const details = (r.details ?? []) as Array<{ group: Record<string, unknown>; count: number }>;
      if (!details.length) return null;
      return {
        kind: (visualization as Kind) ?? 'bar',
        title,
        temporal: false,
        points: details.map((d) => ({ x: Object.values(d.group).map(String).join(' / '), y: d.count })),
      };
    }
    default:
      return null;
  }
}
