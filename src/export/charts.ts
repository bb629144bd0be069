import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

/** A chart of a widget: what to draw, independent of the query that produced it. */
export interface ChartData {
  kind: 'bar' | 'line' | 'area' | 'pie';
  title: string;
  /** Category or time (Unix s) per point. */
  points: Array<{ x: string | number; y: number; series?: string }>;
  /** x holds Unix seconds. */
  temporal: boolean;
}

export interface Chart {
  png: Buffer;
  width: number;
  height: number;
}

const WIDTH = 640;
const HEIGHT = 280;

function spec(c: ChartData): vegaLite.TopLevelSpec {
  const values = c.points.map((p) => ({ ...p, x: c.temporal ? Number(p.x) * 1000 : p.x }));
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: c.title,
    width: WIDTH,
    height: HEIGHT,
    background: 'white',
    data: { values },
  } as const;
  if (c.kind === 'pie') {
    return {
      ...base,
      mark: { type: 'arc' },
      encoding: {
        theta: { field: 'y', type: 'quantitative' },
        color: { field: 'x', type: 'nominal', title: null },
      },
    };
  }
  const hasSeries = c.points.some((p) => p.series !== undefined);
  return {
    ...base,
    mark: {
      type: c.kind === 'bar' ? 'bar' : c.kind,
      ...(c.kind === 'bar' ? {} : { interpolate: 'monotone' }),
    },
    encoding: {
      x: c.temporal
        ? { field: 'x', type: 'temporal', title: null }
        : { field: 'x', type: 'nominal', sort: '-y', title: null, axis: { labelLimit: 120 } },
      y: {
        field: 'y',
        type: 'quantitative',
        title: null,
        ...(hasSeries && c.kind !== 'line' ? { stack: 'zero' } : {}),
      },
      ...(hasSeries ? { color: { field: 'series', type: 'nominal', title: null } } : {}),
    },
  };
}

/**
 * Renders a chart to PNG on the server: Vega-Lite → Vega → SVG (headless, no canvas) →
 * PNG with resvg, using the system's fonts for labels.
 */
export async function renderChart(c: ChartData): Promise<Chart> {
  const compiled = vegaLite.compile(spec(c)).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  const png = new Resvg(svg, {
    background: 'white',
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  })
    .render()
    .asPng();
  const width = Number(/width="(\d+(?:\.\d+)?)"/.exec(svg)?.[1] ?? WIDTH);
  const height = Number(/height="(\d+(?:\.\d+)?)"/.exec(svg)?.[1] ?? HEIGHT);
  return { png: Buffer.from(png), width: Math.round(width), height: Math.round(height) };
}
