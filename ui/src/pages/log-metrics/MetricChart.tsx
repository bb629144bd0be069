import { TimeChart } from '../dashboards/charts/time';
import { type SeriesAnswer, seriesName } from './log-metric';
import '../dashboards/dashboards.css';
import '../dashboards/dash-edit.css';

/**
 * A metric's series over time: the dashboards' time chart (a line per series, a legend
 * naming each by its label values), each point's `value` (an empty bucket: 0).
 */
export function MetricChart({ answer, title }: { answer: SeriesAnswer; title: string }) {
  const names = answer.series.map((s) => seriesName(s.labels));
  const first = answer.series[0];
  if (!first) return <p className="muted">No events counted in this range.</p>;
  const buckets = first.points.map((p, i) => {
    const series: Record<string, number> = {};
    answer.series.forEach((s, k) => {
      series[names[k] as string] = s.points[i]?.value ?? 0;
    });
    return { ts: p.ts, count: answer.series.reduce((n, s) => n + (s.points[i]?.events ?? 0), 0), series };
  });
  return (
    <div className="metric-chart">
      <TimeChart data={{ results: { buckets } }} kind="line" stacked={false} title={title} />
    </div>
  );
}
