import { colorsFor } from '@shared/chart-colors';
import type { CSSProperties } from 'react';
import { formatCount, formatTs } from '../../../format';
import { intervalSeconds } from '../../search/time-range';
import { compact, countTicks } from '../../search/timeline-scale';
import type { Drill } from '../dashboard-address';
import { BucketLinks } from './buckets';
import type { Bucket, QueryData } from './data';

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

/** A drawn bucket's span in seconds: the step between buckets, else the results' interval, else a minute. */
function stepOf(buckets: Bucket[], interval: unknown): number {
  const [a, b] = buckets;
  if (a && b && b.ts > a.ts) return b.ts - a.ts;
  return (typeof interval === 'string' ? intervalSeconds(interval) : null) ?? 60;
}

/**
 * The `line` and `area` kinds, and `bar` over time (a Timeline, or a Table with a time
 * column): a chart over time; with series (split_by) one per series. With `drill` each
 * bucket is a link to its events on the search page (BucketLinks, over the plot).
 */
export function TimeChart({
  data,
  kind,
  stacked,
  title,
  drill,
  what = 'events',
}: {
  data: QueryData;
  kind: string;
  stacked: boolean;
  title: string;
  drill?: Drill | undefined;
  /** What the values count, for the chart's summary ("events", "avg"). */
  what?: string;
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
  const ticks = countTicks(max, 4);
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
  const summary = `${title}: ${kind} chart of ${formatCount(total)} ${what} in ${n} buckets from ${formatTs(first.ts).slice(0, 16)} to ${formatTs(last.ts).slice(0, 16)}, peak ${formatCount(max)}`;
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
        <div className="dash-plot-area">
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
          {drill && (
            <BucketLinks
              buckets={buckets}
              step={stepOf(buckets, data.results?.interval)}
              drill={drill}
              title={title}
            />
          )}
        </div>
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
