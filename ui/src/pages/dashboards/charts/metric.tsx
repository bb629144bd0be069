import {
  addsUp,
  figureTitle,
  isMetricFigure,
  type MetricAnswer,
  metricNumber,
  seriesName,
} from '@shared/metric-figures';
import { metricBuckets, metricTable } from '../metric-data';
import { cellText } from './data';
import { DataTable } from './table';
import { TimeChart } from './time';

/**
 * A Metric widget (docs/api/log-metrics.md "The query type Metric"): line, area and bar a
 * line per series over its steps, of the figure `y`; number one figure; table (and any
 * other kind) a row per series with its totals. Nothing leads to Search: the metric's
 * query, not the widget's, picks its events.
 */
export function MetricVisualization(props: {
  kind: string;
  answer: MetricAnswer;
  y: unknown;
  title: string;
}) {
  const { kind, answer, title } = props;
  const y = isMetricFigure(props.y) ? props.y : 'value';
  if (!answer.series.length) return <p className="muted">No data.</p>;
  if (kind === 'number') return <MetricNumber answer={answer} y={y} />;
  if (kind === 'line' || kind === 'area' || kind === 'bar')
    return (
      <TimeChart
        data={{ results: { buckets: metricBuckets(answer, y) } }}
        kind={kind}
        stacked={false}
        title={title}
        what={figureTitle(y, answer.metric.kind)}
      />
    );
  return <DataTable t={metricTable(answer)} caption={title} />;
}

/**
 * The `number` kind: a figure that adds up (events, count, sum; the value of a count or
 * sum metric) summed over the series, another the single series' total; with several
 * series such a figure has no one number, and the widget says so.
 */
function MetricNumber({ answer, y }: { answer: MetricAnswer; y: string }) {
  const value = metricNumber(answer, y);
  const figure = figureTitle(y, answer.metric.kind);
  const one = answer.series.length === 1;
  const additive = addsUp(y, answer.metric.kind);
  const label = one
    ? `${figure} of ${seriesName(answer.series[0]!, answer.metric.name)}`
    : additive
      ? `${figure}, the sum of ${answer.series.length} series`
      : figure;
  return (
    <div className="dash-number">
      <p className="dash-number-main">
        <span className="dash-number-value">{value === null ? '–' : cellText(value)}</span>
        <span className="dash-number-label">{label}</span>
      </p>
      {value === null && !one && (
        <p className="muted">
          {answer.series.length} series: keep no labels, or show events, count or sum, for one number.
        </p>
      )}
    </div>
  );
}
