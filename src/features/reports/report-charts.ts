import type { ChartData, ChartPoint } from '../../export/charts.js';
import { countryAtlas, numericCountryCode } from '../../export/country-atlas.js';
import { zonedTime } from '../../export/time-format.js';
import {
  COUNTRY_MAP_NO_GEO,
  countryMapData,
  countryMapNotes,
  layoutCountryMap,
} from '../../shared/country-map.js';
import { answerOf, figureTitle, mergedFigure, seriesName } from '../../shared/metric-figures.js';

type Kind = ChartData['kind'];
const CHART_KINDS = new Set<string>(['bar', 'line', 'area', 'pie']);

/** Most series a Metric chart draws (the largest first); the table holds them all. */
export const MAX_CHART_SERIES = 10;
/** Most bars a category chart draws; the table under it holds every row. */
export const MAX_CHART_CATEGORIES = 25;
/** Most buckets a time chart draws: finer buckets are added up into coarser ones. */
export const MAX_CHART_BUCKETS = 120;
// Bucket widths (s) a time chart may add its buckets up to: round numbers on a clock.
const CHART_STEPS = [60, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];

/** What a report knows when it draws a widget: the zone it shows times in, the widget's window. */
export interface ChartContext {
  timezone: string;
  /** A Metric widget's figure (`visualization.options.y`, default `value`). */
  y?: string;
  /** the resolved time range, [fromMs, toMs) */
  window?: { fromMs: number; toMs: number };
}

/** A widget's chart and what the reader should know about it. */
export interface WidgetChart {
  chart: ChartData;
  notes: string[];
}

interface Bucket {
  ts: number;
  count: number;
  series?: Record<string, number>;
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** The seconds of an interval label such as "5m"; NaN for anything else. */
export function intervalSeconds(label: string): number {
  const m = /^(\d+)([smhd])$/.exec(label);
  return m ? Number(m[1]) * (UNIT_SECONDS[m[2] as string] as number) : Number.NaN;
}

/** "15 min", "1 hour", "30 s": a bucket width as a reader says it. */
export function stepText(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? 'day' : `${seconds / 86_400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? 'hour' : `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return seconds === 60 ? 'minute' : `${seconds / 60} min`;
  return `${seconds} s`;
}

/**
 * The bucket width a time chart draws: the query's own when its buckets are few enough,
 * else the finest clock step that is a multiple of it and keeps the chart within
 * MAX_CHART_BUCKETS.
 */
export function chartStep(fine: number, spanSeconds: number): number {
  if (spanSeconds / fine <= MAX_CHART_BUCKETS) return fine;
  for (const s of CHART_STEPS)
    if (s > fine && s % fine === 0 && spanSeconds / s <= MAX_CHART_BUCKETS) return s;
  return fine * Math.ceil(spanSeconds / fine / MAX_CHART_BUCKETS);
}

interface Coarse {
  ts: number;
  count: number;
  series: Record<string, number>;
  members: number;
  complete: boolean;
}

/**
 * A Timeline's buckets added up into the chart's buckets, aligned on the wall clock of
 * the report's zone, and without the buckets at either end that the time range only
 * partly covers: counting only part of a bucket would draw a drop that is not there.
 */
export function timelineChart(
  r: { interval?: string; buckets?: Bucket[] },
  title: string,
  kind: Kind,
  ctx: ChartContext,
): WidgetChart | null {
  const buckets = r.buckets ?? [];
  if (buckets.length === 0) return null;
  const gaps = buckets.slice(1).map((b, i) => b.ts - (buckets[i] as Bucket).ts);
  const fine = intervalSeconds(r.interval ?? '') || Math.min(...gaps, 60);
  const first = (buckets[0] as Bucket).ts;
  const span = (buckets[buckets.length - 1] as Bucket).ts + fine - first;
  const step = chartStep(fine, span);
  const fromS = (ctx.window?.fromMs ?? Number.NEGATIVE_INFINITY) / 1000;
  const toS = (ctx.window?.toMs ?? Number.POSITIVE_INFINITY) / 1000;
  const coarse: Coarse[] = [];
  for (const b of buckets) {
    const wall = zonedTime(b.ts, ctx.timezone).wallMs / 1000;
    const offset = wall - b.ts;
    const start = Math.floor(wall / step) * step - offset;
    let c = coarse[coarse.length - 1];
    if (c === undefined || c.ts !== start) {
      c = { ts: start, count: 0, series: {}, members: 0, complete: true };
      coarse.push(c);
    }
    c.count += b.count;
    for (const [s, n] of Object.entries(b.series ?? {})) c.series[s] = (c.series[s] ?? 0) + n;
    c.members += 1;
    c.complete &&= b.ts >= fromS && b.ts + fine <= toS;
  }
  for (const c of coarse) c.complete &&= c.members === step / fine;
  let lo = 0;
  let hi = coarse.length;
  while (lo < hi && !coarse[lo]?.complete) lo++;
  while (hi > lo && !coarse[hi - 1]?.complete) hi--;
  const dropped = lo > 0 || hi < coarse.length;
  // Too few whole buckets to draw a line of: draw what there is.
  const drawn = hi - lo >= 2 ? coarse.slice(lo, hi) : coarse;
  const split = buckets.some((b) => b.series !== undefined);
  const points: ChartPoint[] = drawn.flatMap((c) =>
    split
      ? Object.entries(c.series).map(([series, y]) => ({ x: c.ts, y, series }))
      : [{ x: c.ts, y: c.count }],
  );
  const notes: string[] = [];
  if (step !== fine)
    notes.push(`The chart adds the ${stepText(fine)} buckets up to ${stepText(step)} buckets.`);
  if (dropped && drawn.length < coarse.length)
    notes.push(
      'The chart leaves out the buckets at the ends of the time range that it covers only in part (their counts would show a false drop).',
    );
  return {
    chart: {
      kind: kind === 'pie' ? 'line' : kind,
      title,
      temporal: true,
      timezone: ctx.timezone,
      step,
      yTitle: `events per ${stepText(step)}`,
      points,
    },
    notes,
  };
}

/**
 * A map widget's map (src/shared/country-map.ts): the countries its TopN or LastN values
 * are placed in by GeoIP, coloured as the web UI colours them, and notes on what the map
 * cannot show. Null when no value carries GeoIP data (a field that holds no addresses):
 * the table then stands alone, as the dashboard shows it.
 */
export function mapChart(type: string, results: unknown, title: string): WidgetChart | null {
  if (type !== 'TopN' && type !== 'LastN') return null;
  const data = countryMapData(results);
  if (!data.hasGeo) return null;
  const layout = layoutCountryMap(data, numericCountryCode, countryAtlas().ids);
  const countries = [...layout.drawn.values()];
  return {
    chart: {
      kind: 'map',
      title,
      temporal: false,
      yTitle: 'events',
      points: countries.map((c) => ({ x: c.name, y: c.count })),
      map: {
        countries: countries.map((c) => ({ id: c.id, name: c.name, count: c.count, step: c.step })),
        steps: layout.scale.steps,
      },
    },
    notes: countryMapNotes(data, layout.offMap),
  };
}

/** What a map widget's section says when its values carry no GeoIP data (no map then). */
export function noMapNotes(type: string, results: unknown, visualization: string | undefined): string[] {
  if (visualization !== 'map' || (type !== 'TopN' && type !== 'LastN')) return [];
  const data = countryMapData(results);
  return !data.hasGeo && data.total > 0 ? [COUNTRY_MAP_NO_GEO] : [];
}

/**
 * The chart a widget's results make, or null when they read better as a table (a
 * Search, a LastN, a Summary without groups, or a table/number/list visualization). A
 * map visualization is a map of countries (mapChart).
 */
export function chartFor(
  type: string,
  results: unknown,
  title: string,
  visualization: string | undefined,
  ctx: ChartContext = { timezone: 'UTC' },
): WidgetChart | null {
  if (visualization === 'map') return mapChart(type, results, title);
  if (visualization && !CHART_KINDS.has(visualization)) return null;
  const r = results as Record<string, unknown>;
  switch (type) {
    case 'TopN': {
      const items = (r.items ?? []) as Array<{ value: unknown; count: number; share?: number }>;
      if (!items.length) return null;
      const kind = (visualization as Kind) ?? 'bar';
      const total = Number(r.total ?? 0);
      const other = Number(r.other ?? 0);
      const shown = kind === 'pie' ? items : items.slice(0, MAX_CHART_CATEGORIES);
      const points: ChartPoint[] = shown.map((i) => ({
        x: String(i.value),
        y: i.count,
        ...(total > 0 ? { share: i.share ?? i.count / total } : {}),
      }));
      // A pie of the top values alone would pass them off as the whole.
      if (kind === 'pie' && other > 0 && total > 0)
        points.push({ x: 'other', y: other, share: other / total });
      const notes =
        shown.length < items.length
          ? [`The chart shows the ${shown.length} largest of ${items.length} values.`]
          : [];
      return { chart: { kind, title, temporal: false, yTitle: 'events', points }, notes };
    }
    case 'Timeline': {
      const kind = (visualization as Kind) ?? 'line';
      return timelineChart(r as { interval?: string; buckets?: Bucket[] }, title, kind, ctx);
    }
    case 'Summary': {
      const details = (r.details ?? []) as Array<{ group: Record<string, unknown>; count?: number }>;
      if (!details.length) return null;
      const kind = (visualization as Kind) ?? 'bar';
      const total = Number((r.totals as Record<string, unknown> | undefined)?.count ?? 0);
      const valued = details.filter((d) => typeof d.count === 'number');
      if (!valued.length) return null;
      const shown = kind === 'pie' ? valued : valued.slice(0, MAX_CHART_CATEGORIES);
      const points: ChartPoint[] = shown.map((d) => ({
        x: Object.values(d.group).map(String).join(' / '),
        y: d.count as number,
        ...(total > 0 ? { share: (d.count as number) / total } : {}),
      }));
      const rest = total - points.reduce((n, p) => n + p.y, 0);
      if (kind === 'pie' && rest > 0) points.push({ x: 'other', y: rest, share: rest / total });
      const notes =
        shown.length < valued.length
          ? [`The chart shows the ${shown.length} largest of ${valued.length} groups.`]
          : [];
      return { chart: { kind, title, temporal: false, yTitle: 'events', points }, notes };
    }
    case 'Metric':
      return metricChart(r, title, (visualization as Kind) ?? 'line', ctx.y ?? 'value', ctx.timezone);
    default:
      return null;
  }
}

/**
 * A line (or area, bar) per series over its points, of the figure `y` (default `value`):
 * the 10 largest series; steps merged (as the metric merges them) into clock-round ones,
 * at most MAX_CHART_BUCKETS (chartStep).
 */
export function metricChart(
  results: unknown,
  title: string,
  kind: ChartData['kind'],
  y: string,
  timezone: string,
): WidgetChart | null {
  const a = answerOf(results);
  if (!a || a.series.length === 0) return null;
  const drawn = a.series.slice(0, MAX_CHART_SERIES);
  const several = a.series.length > 1;
  const n = Math.max(...drawn.map((s) => s.points.length));
  // A clock-round multiple of the answer's step (chartStep), the points merged on its edges.
  const step = chartStep(a.step, n * a.step);
  const k = step / a.step;
  let cut = false;
  const points: ChartPoint[] = drawn.flatMap((s) => {
    const name = several ? { series: seriesName(s, a.metric.name) } : {};
    const groups = new Map<number, typeof s.points>();
    for (const p of s.points) {
      const at = Math.floor(p.ts / step) * step;
      const group = groups.get(at);
      if (group) group.push(p);
      else groups.set(at, [p]);
    }
    const whole = [...groups];
    // Steps the range covers only in part at either end would draw a drop that is not there.
    while (whole.length > 2 && whole[0]![1].length < k) whole.shift();
    while (whole.length > 2 && whole[whole.length - 1]![1].length < k) whole.pop();
    if (whole.length < groups.size) cut = true;
    return whole.flatMap(([x, group]) => {
      const v = mergedFigure(group, y, a.metric.kind);
      return v === null ? [] : [{ x, y: v, ...name }];
    });
  });
  const notes: string[] = [];
  if (drawn.length < a.series.length)
    notes.push(`The chart shows the ${drawn.length} largest of ${a.series.length} series.`);
  if (k > 1) notes.push(`The chart merges the ${stepText(a.step)} steps into ${stepText(step)} steps.`);
  if (cut)
    notes.push(
      'The chart leaves out the merged steps at the ends of the time range that it covers only in part.',
    );
  if (k > 1 && (/^0\./.test(y) || (y === 'value' && a.metric.kind === 'quantiles')))
    notes.push("A quantile of merged steps is drawn as the greatest of the steps' quantiles.");
  return {
    chart: {
      kind: kind === 'pie' || kind === 'map' ? 'line' : kind,
      title,
      temporal: true,
      timezone,
      step,
      yTitle: `${figureTitle(y, a.metric.kind)} per ${stepText(step)}`,
      points,
    },
    notes,
  };
}
