/**
 * Widget visualizations drawn without a chart library: a widget's query result
 * (GenericQuery of Search, TopN, LastN, Timeline, Summary, Patterns or Table) shown as its kind says.
 */

import { CATEGORY_PALETTE, colorsFor, fixedColors, PLAIN_COLOR } from '@shared/chart-colors';
import { COUNTRY_MAP_NO_GEO, type CountryMapData, countryMapData } from '@shared/country-map';
import { type CSSProperties, lazy, type ReactNode, Suspense } from 'react';
import { isPatternsResults, PatternsTable } from '../../components/Patterns';
import { formatCount, formatTs } from '../../format';
import { asBuckets, asItems, asTotals, isTableResults } from './table-data';

export type VisualizationKind = 'table' | 'bar' | 'line' | 'area' | 'pie' | 'number' | 'map' | 'list';

export interface QueryData {
  query_id?: string;
  type?: string;
  status?: string;
  error?: string | null;
  results?: Record<string, unknown>;
}

interface Point {
  label: string;
  value: number;
}
interface Bucket {
  ts: number;
  count: number;
  series?: Record<string, number>;
}
interface Table {
  columns: string[];
  rows: unknown[][];
}

/**
 * The map of countries, with the atlas and d3-geo: a chunk of its own, loaded on the first
 * map. Should the chunk not load (a deploy replaced it), the countries are a table.
 */
const CountryMap = lazy(() =>
  import('./CountryMap').catch(() => ({
    default: ({ data, title }: { data: CountryMapData; title: string }) => (
      <>
        <p className="muted dash-map-note">The map could not be loaded; reload the page to see it.</p>
        <DataTable
          t={{ columns: ['country', 'events'], rows: data.countries.map((c) => [c.name, c.count]) }}
          caption={title}
        />
      </>
    ),
  })),
);

/** Round steps for a value axis: 1, 2 or 5 times a power of ten, about `ticks` of them to the top. */
export function yTicks(max: number, ticks = 4): number[] {
  const raw = Math.max(1, max) / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const n = raw / mag;
  const step = Math.max(1, (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * mag);
  const top = Math.max(step, Math.ceil(Math.max(1, max) / step) * step);
  const out: number[] = [];
  for (let v = 0; v <= top + step / 2; v += step) out.push(v);
  return out;
}

/** 1200 → 1.2k, 3000000 → 3M: axis labels stay narrow. */
export function compact(n: number): string {
  const r = (v: number) => String(Math.round(v * 10) / 10);
  if (n >= 1e9) return `${r(n / 1e9)}G`;
  if (n >= 1e6) return `${r(n / 1e6)}M`;
  if (n >= 1e3) return `${r(n / 1e3)}k`;
  return r(n);
}

const asNumber = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const cellText = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isInteger(v) ? formatCount(v) : String(Math.round(v * 100) / 100);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};
const label = (v: unknown) => (v === null || v === undefined || v === '' ? '(none)' : String(v));
const shortTime = (ts: number, withDate: boolean) => formatTs(ts).slice(withDate ? 5 : 11, 16);

/** Most points a time chart draws: finer buckets are summed into groups (a day of minutes: 12-minute bars). */
const MAX_POINTS = 120;

function coarsen(buckets: Bucket[]): Bucket[] {
  const k = Math.ceil(buckets.length / MAX_POINTS);
  if (k <= 1) return buckets;
  const out: Bucket[] = [];
  for (let i = 0; i < buckets.length; i += k) {
    const group = buckets.slice(i, i + k);
    const series: Record<string, number> = {};
    for (const b of group)
      for (const [name, v] of Object.entries(b.series ?? {})) series[name] = (series[name] ?? 0) + v;
    out.push({
      ts: (group[0] as Bucket).ts,
      count: group.reduce((s, b) => s + b.count, 0),
      ...(Object.keys(series).length ? { series } : {}),
    });
  }
  return out;
}

/** Category/value pairs: TopN and LastN items, Summary groups, Timeline buckets, Patterns. */
export function points(data: QueryData): Point[] {
  const r = data.results ?? {};
  if (Array.isArray(r.patterns))
    return (r.patterns as Array<{ template: string; count: unknown }>).map((p) => ({
      label: p.template || '(empty)',
      value: asNumber(p.count),
    }));
  if (Array.isArray(r.items))
    return (r.items as Array<{ value: unknown; count: unknown }>).map((i) => ({
      label: label(i.value),
      value: asNumber(i.count),
    }));
  if (Array.isArray(r.details))
    return (r.details as Array<{ group?: Record<string, unknown>; count?: unknown }>).map((d) => ({
      label:
        Object.values(d.group ?? {})
          .map(label)
          .join(' · ') || 'all',
      value: asNumber(d.count),
    }));
  if (Array.isArray(r.buckets))
    return (r.buckets as Bucket[]).map((b) => ({ label: formatTs(b.ts).slice(0, 16), value: b.count }));
  return [];
}

/** Rows and columns of any result. */
export function table(data: QueryData, fields?: unknown): Table {
  const r = data.results ?? {};
  if (isTableResults(r))
    return {
      columns: r.columns.map((c) => c.name),
      rows: r.rows.map((row) =>
        row.map((v, i) => (r.columns[i]?.type === 'time' && typeof v === 'number' ? formatTs(v) : v)),
      ),
    };
  if (Array.isArray(r.patterns)) {
    const patterns = r.patterns as Array<{ template: string; count: number; share: number; new: boolean }>;
    return {
      columns: ['pattern', 'count', 'share', 'new'],
      rows: patterns.map((p) => [
        p.template || '(empty)',
        p.count,
        `${(asNumber(p.share) * 100).toFixed(1)} %`,
        p.new ? 'new' : '',
      ]),
    };
  }
  if (Array.isArray(r.events)) {
    const events = r.events as Array<Record<string, unknown>>;
    const cols =
      Array.isArray(fields) && fields.length
        ? (fields as string[])
        : ['ts', ...Object.keys(events[0] ?? {}).filter((k) => k !== 'ts' && k !== 'ev_id')].slice(0, 6);
    return {
      columns: cols,
      rows: events.map((e) => cols.map((c) => (c === 'ts' ? formatTs(e.ts) : e[c]))),
    };
  }
  if (Array.isArray(r.details) && (r.details as unknown[]).length) {
    const details = r.details as Array<Record<string, unknown> & { group?: Record<string, unknown> }>;
    const groupCols = Object.keys(details[0]?.group ?? {});
    const metricCols = Object.keys(details[0] ?? {}).filter((k) => k !== 'group');
    return {
      columns: [...groupCols, ...metricCols],
      rows: details.map((d) => [...groupCols.map((g) => d.group?.[g]), ...metricCols.map((m) => d[m])]),
    };
  }
  if (r.totals && typeof r.totals === 'object') {
    const totals = r.totals as Record<string, unknown>;
    return { columns: ['metric', 'value'], rows: Object.entries(totals).map(([k, v]) => [k, v]) };
  }
  if (Array.isArray(r.buckets)) {
    const buckets = r.buckets as Bucket[];
    return { columns: ['time', 'count'], rows: buckets.map((b) => [formatTs(b.ts).slice(0, 16), b.count]) };
  }
  if (Array.isArray(r.items)) {
    const items = r.items as Array<Record<string, unknown>>;
    const hasShare = items.some((i) => typeof i.share === 'number');
    return {
      columns: hasShare ? ['value', 'count', 'share'] : ['value', 'count'],
      rows: items.map((i) =>
        hasShare
          ? [label(i.value), i.count, `${(asNumber(i.share) * 100).toFixed(1)} %`]
          : [label(i.value), i.count],
      ),
    };
  }
  return { columns: [], rows: [] };
}

function DataTable({ t, caption }: { t: Table; caption: string }) {
  if (!t.rows.length) return <p className="muted">No data.</p>;
  return (
    <div className="dash-table-wrap">
      <table className="list dash-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {t.columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {t.rows.map((row, i) => (
            // Rows have no identity of their own; their order is the result's.
            // biome-ignore lint/suspicious/noArrayIndexKey: see above
            <tr key={i}>
              {row.map((cell, j) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional
                <td key={j}>{cellText(cell)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function List({ data }: { data: QueryData }) {
  const r = data.results ?? {};
  if (Array.isArray(r.events)) {
    const events = r.events as Array<Record<string, unknown>>;
    if (!events.length) return <p className="muted">No data.</p>;
    return (
      <ul className="dash-list">
        {events.map((e, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: events may share an id across pages
          <li key={i}>
            <span className="muted">{formatTs(e.ts)}</span> {cellText(e.message ?? e.host)}
          </li>
        ))}
      </ul>
    );
  }
  const pts = points(data);
  if (!pts.length) return <p className="muted">No data.</p>;
  return (
    <ul className="dash-list">
      {pts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat
        <li key={i}>
          <span>{p.label}</span> <span className="muted">{formatCount(p.value)}</span>
        </li>
      ))}
    </ul>
  );
}

function BigNumber({ data }: { data: QueryData }) {
  const r = data.results ?? {};
  let stats: Array<[string, unknown]>;
  if (r.totals && typeof r.totals === 'object') {
    const all = Object.entries(r.totals as Record<string, unknown>);
    // `count` comes with every Summary; it leads only when it is all there is.
    stats =
      all.length > 1 ? [...all.filter(([k]) => k !== 'count'), ...all.filter(([k]) => k === 'count')] : all;
  } else if (typeof r.total === 'number') stats = [['events', r.total]];
  else {
    const pts = points(data);
    stats = [['total', pts.reduce((s, p) => s + p.value, 0)]];
  }
  const [first, ...rest] = stats;
  if (!first) return <p className="muted">No data.</p>;
  return (
    <div className="dash-number">
      <p className="dash-number-main">
        <span className="dash-number-value">{cellText(first[1])}</span>
        <span className="dash-number-label">{first[0]}</span>
      </p>
      {rest.length > 0 && (
        <dl className="dash-number-rest">
          {rest.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{cellText(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}

/** Horizontal bars, one per category, each an SVG bar scaled to the largest. */
function Bars({ pts, title }: { pts: Point[]; title: string }) {
  if (!pts.length) return <p className="muted">No data.</p>;
  const max = Math.max(1, ...pts.map((p) => p.value));
  const names = pts.map((p) => p.label);
  const fixed = fixedColors(names);
  return (
    <ul className="dash-bars" aria-label={`${title}: bar chart`}>
      {pts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat
        <li key={i}>
          <span className="dash-bar-label" title={p.label}>
            {p.label}
          </span>
          <svg className="dash-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
            <rect x="0" y="0" height="10" width={(p.value / max) * 100} fill={fixed?.[i] ?? PLAIN_COLOR} />
          </svg>
          <span className="dash-bar-value">{formatCount(p.value)}</span>
        </li>
      ))}
    </ul>
  );
}

/** Line, area or column chart over time; with series (split_by) one per series. */
function TimeChart({
  data,
  kind,
  stacked,
  title,
}: {
  data: QueryData;
  kind: string;
  stacked: boolean;
  title: string;
}) {
  const buckets = coarsen((data.results?.buckets as Bucket[] | undefined) ?? []);
  if (!buckets.length) return <p className="muted">No data.</p>;
  const names = [...new Set(buckets.flatMap((b) => Object.keys(b.series ?? {})))];
  const series = names.length
    ? names.map((n) => ({ name: n, values: buckets.map((b) => b.series?.[n] ?? 0) }))
    : [{ name: 'events', values: buckets.map((b) => b.count) }];
  // Stacked: each series sits on the ones before it.
  const base = buckets.map(() => 0);
  const layers = series.map((s) => {
    const lo = [...base];
    const hi = s.values.map((v, i) => (stacked ? (base[i] ?? 0) + v : v));
    if (stacked) for (const [i, v] of hi.entries()) base[i] = v;
    return { ...s, lo: stacked ? lo : base.map(() => 0), hi };
  });
  const max = Math.max(1, ...layers.flatMap((l) => l.hi));
  const ticks = yTicks(max);
  const top = ticks[ticks.length - 1] as number;
  const colors = colorsFor(series.map((s) => s.name));
  const W = 600;
  const H = 160;
  const n = buckets.length;
  const x = (i: number) => (n === 1 ? W / 2 : (i / (n - 1)) * W);
  const y = (v: number) => H - (v / top) * H;
  const total = buckets.reduce((s, b) => s + b.count, 0);
  const first = buckets[0] as Bucket;
  const last = buckets[n - 1] as Bucket;
  const withDate = last.ts - first.ts >= 20 * 3600;
  const summary = `${title}: ${kind} chart of ${formatCount(total)} events in ${n} buckets from ${formatTs(first.ts).slice(0, 16)} to ${formatTs(last.ts).slice(0, 16)}, peak ${formatCount(max)}`;
  const labels = ticks.map(compact);
  const axisWidth = `${Math.max(...labels.map((l) => l.length)) + 1}ch`;
  return (
    <figure className="dash-chart" style={{ '--dash-yaxis': axisWidth } as CSSProperties}>
      <div className="dash-plot">
        {/* The values' scale: read from the chart's summary by assistive technology. */}
        <div className="dash-yaxis muted" aria-hidden="true">
          {ticks.map((t, i) => (
            <span key={t} style={{ bottom: `${(t / top) * 100}%` }}>
              {labels[i]}
            </span>
          ))}
        </div>
        <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={summary}>
          {ticks.map((t) => (
            <line
              key={t}
              x1="0"
              y1={y(t)}
              x2={W}
              y2={y(t)}
              className={t === 0 ? 'dash-axis' : 'dash-gridline'}
            />
          ))}
          {layers.map((l, li) => {
            const color = colors[li];
            if (kind === 'bar') {
              const bw = W / n;
              return (
                <g key={l.name} fill={color}>
                  {l.hi.map((v, i) => (
                    <rect
                      key={buckets[i]?.ts ?? i}
                      x={i * bw + bw * 0.1}
                      width={bw * 0.8}
                      y={y(v)}
                      height={y(l.lo[i] ?? 0) - y(v)}
                    />
                  ))}
                </g>
              );
            }
            const topLine = l.hi.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`);
            if (kind === 'area') {
              const bottom = l.lo.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).reverse();
              return (
                <polygon
                  key={l.name}
                  points={[...topLine, ...bottom].join(' ')}
                  fill={color}
                  fillOpacity={0.35}
                  stroke={color}
                  strokeWidth={1.5}
                  vectorEffect="non-scaling-stroke"
                />
              );
            }
            return (
              <polyline
                key={l.name}
                points={topLine.join(' ')}
                fill="none"
                stroke={color}
                strokeWidth={2}
                vectorEffect="non-scaling-stroke"
              />
            );
          })}
        </svg>
      </div>
      <figcaption className="dash-chart-axis muted">
        <span>{shortTime(first.ts, withDate)}</span>
        <span>peak {formatCount(max)}</span>
        <span>{shortTime(last.ts, withDate)}</span>
      </figcaption>
      {names.length > 0 && <Legend names={names} />}
    </figure>
  );
}

function Legend({ names }: { names: string[] }) {
  const colors = colorsFor(names);
  return (
    <ul className="dash-legend">
      {names.map((n, i) => (
        <li key={n}>
          <svg width="10" height="10" aria-hidden="true">
            <rect width="10" height="10" fill={colors[i]} />
          </svg>
          {n}
        </li>
      ))}
    </ul>
  );
}

function Pie({ pts, title }: { pts: Point[]; title: string }) {
  const total = pts.reduce((s, p) => s + p.value, 0);
  if (!total) return <p className="muted">No data.</p>;
  const shown = pts.slice(0, CATEGORY_PALETTE.length);
  const colors = colorsFor(shown.map((p) => p.label));
  let angle = -Math.PI / 2;
  const slices = shown.map((p, i) => {
    const a0 = angle;
    const a1 = angle + (p.value / total) * Math.PI * 2;
    angle = a1;
    const large = a1 - a0 > Math.PI ? 1 : 0;
    const [x0, y0, x1, y1] = [Math.cos(a0), Math.sin(a0), Math.cos(a1), Math.sin(a1)].map((v) => 50 + 48 * v);
    const d =
      p.value === total
        ? 'M 50 2 A 48 48 0 1 1 49.99 2 Z'
        : `M 50 50 L ${x0} ${y0} A 48 48 0 ${large} 1 ${x1} ${y1} Z`;
    return <path key={p.label} d={d} fill={colors[i]} />;
  });
  const pct = (v: number) => `${((v / total) * 100).toFixed(1)} %`;
  return (
    <div className="dash-pie">
      <svg
        viewBox="0 0 100 100"
        role="img"
        aria-label={`${title}: pie chart, ${shown.map((p) => `${p.label} ${pct(p.value)}`).join(', ')}`}
      >
        {slices}
      </svg>
      <ul className="dash-legend dash-legend-column">
        {shown.map((p, i) => (
          <li key={p.label}>
            <svg width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" fill={colors[i]} />
            </svg>
            {p.label} <span className="muted">{pct(p.value)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/**
 * A Table's results (a query with pipes) as the results a visualization of `kind` reads:
 * a time series, category values or totals, over the `value` column (table-data.ts).
 */
function fromTable(data: QueryData, kind: string, value: unknown): QueryData {
  const t = data.results;
  if (!isTableResults(t)) return data;
  const buckets = kind === 'line' || kind === 'area' || kind === 'bar' ? asBuckets(t, value) : null;
  if (buckets) return { ...data, results: { buckets } };
  if (kind === 'number') return { ...data, results: { totals: asTotals(t, value) } };
  if (kind === 'table') return data;
  return { ...data, results: { items: asItems(t, value) } };
}

/** A widget's content by its visualization kind. */
export function Visualization(props: {
  kind: VisualizationKind | string;
  options: Record<string, unknown>;
  data: QueryData;
  title: string;
  fields?: unknown;
}): ReactNode {
  const { kind, title } = props;
  const data = fromTable(props.data, kind, props.options.value);
  const isTime = Array.isArray(data.results?.buckets);
  // A Patterns widget: its templates as the search page's Patterns tab shows them.
  if ((kind === 'list' || kind === 'table') && isPatternsResults(data.results))
    return <PatternsTable results={data.results} caption={title} compact />;
  switch (kind) {
    case 'number':
      return <BigNumber data={data} />;
    case 'list':
      return <List data={data} />;
    case 'pie':
      return <Pie pts={points(data)} title={title} />;
    case 'bar':
    case 'line':
    case 'area':
      if (isTime)
        return <TimeChart data={data} kind={kind} stacked={props.options.stacked === true} title={title} />;
      return <Bars pts={points(data)} title={title} />;
    case 'map': {
      // TopN/LastN values placed by GeoIP (the dashboard asks for it on map widgets).
      const countries = countryMapData(data.results);
      if (countries.hasGeo)
        return (
          <Suspense fallback={<p className="muted">Loading the map…</p>}>
            <CountryMap data={countries} title={title} />
          </Suspense>
        );
      const t = table(data, props.fields);
      return (
        <>
          {t.rows.length > 0 && <p className="muted dash-map-note">{COUNTRY_MAP_NO_GEO}</p>}
          <DataTable t={t} caption={title} />
        </>
      );
    }
    default:
      return <DataTable t={table(data, props.fields)} caption={title} />;
  }
}
