import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import { CATEGORY_PALETTE, fixedColors, PLAIN_COLOR } from '../shared/chart-colors.js';
import {
  COUNTRY_MAP_ASPECT,
  COUNTRY_MAP_BORDER,
  COUNTRY_MAP_COLORS,
  COUNTRY_MAP_NO_DATA,
  COUNTRY_MAP_PROJECTION,
  type ScaleStep,
} from '../shared/country-map.js';
import { countText, percentText } from './cells.js';
import { countryAtlas } from './country-atlas.js';
import { REPORT_COLORS, REPORT_FONTS, REPORT_TYPE } from './report-style.js';
import { zonedTime } from './time-format.js';

/** One value of a chart: a category or a bucket start, its value, its series, its share. */
export interface ChartPoint {
  /** category, or time (Unix s) of a bucket's start */
  x: string | number;
  y: number;
  series?: string;
  /** the share (a fraction) of a category, when it is not simply y over the sum of all y */
  share?: number;
}

/** A map's countries (src/shared/country-map.ts): each by its atlas id, with its step of the scale. */
export interface MapData {
  countries: Array<{ id: string; name: string; count: number; step: number }>;
  steps: ScaleStep[];
}

/** A chart of a widget: what to draw, independent of the query that produced it. */
export interface ChartData {
  kind: 'bar' | 'line' | 'area' | 'pie' | 'map';
  /** what the chart shows; the document's heading stands above it, so it is not drawn */
  title: string;
  points: ChartPoint[];
  /** x holds Unix seconds. */
  temporal: boolean;
  /** temporal: the IANA zone whose wall-clock times the time axis shows (default UTC) */
  timezone?: string;
  /** temporal: bucket width in seconds; bars span their bucket, lines join bucket middles */
  step?: number;
  /** title of the value axis, e.g. "events per 15 min" */
  yTitle?: string;
  /** map: the countries coloured (points then hold each country's name and count) */
  map?: MapData;
}

export interface Chart {
  png: Buffer;
  /** The same chart as SVG: drawn as vector graphics with real text where a format can. */
  svg: string;
  width: number;
  height: number;
}

const WIDTH = 640;
const HEIGHT = 260;
const FONT = REPORT_FONTS.chart;
// Rendered at twice the display size, so that printed charts stay sharp.
const ZOOM = 2;

/** A colour scale over `domain` (in legend order): fixed colours where the names have them. */
function colorScale(domain: string[], names: string[] = domain): object {
  const range = fixedColors(names);
  return { domain, range: range ?? CATEGORY_PALETTE };
}

/** Names by their total value, largest first (legend and stacking order). */
function byTotal(points: ChartPoint[], key: (p: ChartPoint) => string): string[] {
  const totals = new Map<string, number>();
  for (const p of points) totals.set(key(p), (totals.get(key(p)) ?? 0) + p.y);
  return [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([name]) => name);
}

/**
 * Tick labels in 24-hour wall-clock time; a tick at midnight names the day instead.
 * The data already hold wall-clock times as if they were UTC (vega would otherwise draw
 * in the process's zone), so the labels are formatted in UTC.
 */
const TIME_LABEL =
  "utchours(datum.value) == 0 && utcminutes(datum.value) == 0 ? utcFormat(datum.value, '%e %b') : utcFormat(datum.value, '%H:%M')";

function offsetLabel(tz: string, seconds: number): string {
  const off = zonedTime(seconds, tz).offsetMs / 60_000;
  const abs = Math.abs(off);
  const hm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return `UTC${off < 0 ? '-' : '+'}${hm}`;
}

function temporalSpec(c: ChartData): object {
  const tz = c.timezone ?? 'UTC';
  const xs = c.points.map((p) => Number(p.x));
  const sorted = [...new Set(xs)].sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((x, i) => x - (sorted[i] as number));
  const step = (c.step ?? (gaps.length ? Math.min(...gaps) : 60)) * 1000;
  const series = c.points.some((p) => p.series !== undefined) ? byTotal(c.points, (p) => p.series ?? '') : [];
  // Bars span their bucket (x to x2), which vega-lite does not stack: they are stacked
  // here, each series on top of the larger ones.
  const base = new Map<number, number>();
  const ordered = [...c.points].sort(
    (a, b) => series.indexOf(a.series ?? '') - series.indexOf(b.series ?? ''),
  );
  const values = ordered.map((p) => {
    const start = zonedTime(Number(p.x), tz).wallMs;
    const y0 = base.get(start) ?? 0;
    base.set(start, y0 + p.y);
    return {
      start,
      end: start + step,
      mid: start + step / 2,
      y: p.y,
      y0,
      y1: y0 + p.y,
      series: p.series ?? '',
      rank: series.indexOf(p.series ?? ''),
    };
  });
  const first = sorted[0] ?? 0;
  const axis = {
    title: `Time (${tz}, ${offsetLabel(tz, first)})`,
    labelExpr: TIME_LABEL,
    labelOverlap: true,
    grid: false,
  };
  const yAxis = { format: ',d', tickMinStep: 1, tickCount: 6 };
  const color = series.length
    ? { color: { field: 'series', type: 'nominal', title: null, scale: colorScale(series), sort: series } }
    : { color: { value: PLAIN_COLOR } };
  const xEnc = (field: string) => ({ field, type: 'temporal', scale: { type: 'utc' }, axis });
  if (c.kind === 'bar') {
    return {
      data: { values },
      mark: { type: 'bar' },
      encoding: {
        x: xEnc('start'),
        x2: { field: 'end' },
        y: { field: 'y1', type: 'quantitative', title: c.yTitle ?? null, axis: yAxis, scale: { zero: true } },
        y2: { field: 'y0' },
        ...color,
      },
    };
  }
  const stacked = series.length > 0 && c.kind === 'area';
  return {
    data: { values },
    mark:
      c.kind === 'area'
        ? { type: 'area', interpolate: 'linear', opacity: 0.85 }
        : { type: 'line', interpolate: 'linear', strokeWidth: 1.5 },
    encoding: {
      x: xEnc('mid'),
      y: {
        field: 'y',
        type: 'quantitative',
        title: c.yTitle ?? null,
        axis: yAxis,
        stack: stacked ? 'zero' : null,
      },
      ...color,
      ...(series.length ? { order: { field: 'rank', type: 'quantitative' } } : {}),
    },
  };
}

function shares(c: ChartData): Array<{ name: string; y: number; share: number }> {
  const total = c.points.reduce((s, p) => s + p.y, 0);
  return c.points.map((p) => ({
    name: String(p.x),
    y: p.y,
    share: p.share ?? (total > 0 ? p.y / total : 0),
  }));
}

function pieSpec(c: ChartData): object {
  const slices = shares(c).sort((a, b) => b.y - a.y);
  const values = slices.map((s, rank) => ({
    ...s,
    rank,
    label: `${s.name}  ${percentText(s.share)}`,
    pct: s.share >= 0.04 ? percentText(s.share) : '',
  }));
  const domain = values.map((v) => v.label);
  return {
    data: { values },
    encoding: {
      theta: { field: 'y', type: 'quantitative', stack: true },
      order: { field: 'rank', type: 'quantitative' },
      color: {
        field: 'label',
        type: 'nominal',
        title: null,
        sort: domain,
        scale: colorScale(
          domain,
          values.map((v) => v.name),
        ),
        legend: { labelLimit: 260 },
      },
    },
    layer: [
      { mark: { type: 'arc', outerRadius: 105, stroke: 'white', strokeWidth: 1 } },
      {
        mark: { type: 'text', radius: 125, fontSize: REPORT_TYPE.chart.pieLabel },
        encoding: { text: { field: 'pct' }, color: { value: REPORT_COLORS.chartText } },
      },
    ],
  };
}

function categorySpec(c: ChartData): object {
  const bars = shares(c).sort((a, b) => b.y - a.y);
  const values = bars.map((b) => ({ ...b, label: `${countText(b.y)} (${percentText(b.share)})` }));
  const names = values.map((v) => v.name);
  const fixed = fixedColors(names);
  return {
    data: { values },
    encoding: {
      y: { field: 'name', type: 'nominal', sort: names, title: null, axis: { labelLimit: 220 } },
      x: {
        field: 'y',
        type: 'quantitative',
        title: c.yTitle ?? null,
        axis: { format: ',d', tickMinStep: 1, tickCount: 5 },
        // Room on the right for the label of the longest bar.
        scale: { domainMax: Math.max(1, ...values.map((v) => v.y)) * 1.22, nice: false },
      },
    },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          color: fixed
            ? { field: 'name', type: 'nominal', scale: { domain: names, range: fixed }, legend: null }
            : { value: PLAIN_COLOR },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: REPORT_TYPE.chart.label },
        encoding: { text: { field: 'label' } },
      },
    ],
  };
}

/**
 * A map of countries as the web UI's map widget draws it (src/shared/country-map.ts): the
 * same atlas, projection and colour steps, in the light theme. The atlas goes inline as
 * TopoJSON; each country's step is looked up by its ISO 3166-1 numeric id.
 */
function mapSpec(c: ChartData): object {
  const { topology } = countryAtlas();
  const steps = c.map?.steps ?? [];
  const values = (c.map?.countries ?? []).map((m) => ({
    id: m.id,
    name: m.name,
    count: m.count,
    range: steps[m.step]?.label ?? '',
  }));
  return {
    height: Math.round(WIDTH * COUNTRY_MAP_ASPECT),
    projection: { type: COUNTRY_MAP_PROJECTION },
    data: { values: topology, format: { type: 'topojson', feature: 'countries' } },
    transform: [{ lookup: 'id', from: { data: { values }, key: 'id', fields: ['name', 'count', 'range'] } }],
    mark: { type: 'geoshape', stroke: COUNTRY_MAP_BORDER.light, strokeWidth: 0.5 },
    encoding: {
      color: {
        condition: {
          test: 'isValid(datum.range) && datum.range !== ""',
          field: 'range',
          type: 'ordinal',
          title: 'events per country',
          scale: {
            domain: steps.map((s) => s.label),
            range: steps.map((s) => COUNTRY_MAP_COLORS.light[s.shade]),
          },
          legend: { orient: 'bottom', direction: 'horizontal', symbolType: 'square', symbolSize: 120 },
        },
        value: COUNTRY_MAP_NO_DATA.light,
      },
    },
  };
}

/** The Vega-Lite specification of a chart. */
export function chartSpec(c: ChartData): vegaLite.TopLevelSpec {
  if (c.kind === 'map')
    return {
      $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
      width: WIDTH,
      background: 'white',
      padding: 8,
      config: {
        font: FONT,
        view: { stroke: null },
        legend: { labelFontSize: REPORT_TYPE.chart.label, titleFontSize: REPORT_TYPE.chart.label },
      },
      ...mapSpec(c),
    } as vegaLite.TopLevelSpec;
  const categories = c.temporal ? 0 : new Set(c.points.map((p) => String(p.x))).size;
  // Horizontal bars get the height their labels need.
  const height = !c.temporal && c.kind !== 'pie' ? Math.min(560, Math.max(120, 22 * categories)) : HEIGHT;
  const body = c.temporal ? temporalSpec(c) : c.kind === 'pie' ? pieSpec(c) : categorySpec(c);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: c.temporal ? WIDTH : c.kind === 'pie' ? 300 : 440,
    height,
    background: 'white',
    padding: 8,
    config: {
      font: FONT,
      view: { stroke: null },
      axis: {
        labelFontSize: REPORT_TYPE.chart.label,
        titleFontSize: REPORT_TYPE.chart.label,
        titleFontWeight: 'normal',
        labelColor: REPORT_COLORS.chartText,
      },
      legend: { labelFontSize: REPORT_TYPE.chart.label },
    },
    ...body,
  } as vegaLite.TopLevelSpec;
}

/** The chart as SVG: Vega-Lite → Vega → SVG, headless (no canvas). */
export async function chartSvg(c: ChartData): Promise<string> {
  const compiled = vegaLite.compile(chartSpec(c)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/**
 * Renders a chart to PNG on the server: Vega-Lite → Vega → SVG → PNG with resvg, using
 * the system's fonts for labels. Time axes show wall-clock time in `c.timezone`, 24-hour.
 */
export async function renderChart(c: ChartData): Promise<Chart> {
  const svg = await chartSvg(c);
  const png = new Resvg(svg, {
    background: 'white',
    fitTo: { mode: 'zoom', value: ZOOM },
    font: { loadSystemFonts: true, defaultFontFamily: FONT },
  })
    .render()
    .asPng();
  const width = Number(/width="(\d+(?:\.\d+)?)"/.exec(svg)?.[1] ?? WIDTH);
  const height = Number(/height="(\d+(?:\.\d+)?)"/.exec(svg)?.[1] ?? HEIGHT);
  return { png: Buffer.from(png), svg, width: Math.round(width), height: Math.round(height) };
}
