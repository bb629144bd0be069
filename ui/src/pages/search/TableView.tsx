import type { TableResults } from '../../api';
import { Visualization } from '../dashboards/charts';
import { numberColumns } from '../dashboards/table-data';

/** How a table of a query with pipes is shown: the table itself or a chart over a number column. */
export interface TableChart {
  kind: 'table' | 'bar' | 'line' | 'area' | 'pie' | 'number';
  /** The number column charted (the first when absent). */
  value?: string;
}

const KINDS: ReadonlyArray<readonly [TableChart['kind'], string]> = [
  ['table', 'Table'],
  ['bar', 'Bar'],
  ['line', 'Line'],
  ['area', 'Area'],
  ['pie', 'Pie'],
  ['number', 'Number'],
];

/**
 * The rows of a query with pipes (a Table query), with a chart picker over their columns:
 * a chart needs a number column; line and area need a time column too (a `timechart`).
 */
export function TableView(props: {
  results: TableResults | null;
  chart: TableChart;
  onChart: (chart: TableChart) => void;
}) {
  const { results, chart } = props;
  if (!results) return null;
  const numbers = numberColumns(results);
  const hasTime = results.columns.some((c) => c.type === 'time');
  const usable = (k: TableChart['kind']) =>
    k === 'table' || (numbers.length > 0 && ((k !== 'line' && k !== 'area') || hasTime));
  const kind = usable(chart.kind) ? chart.kind : 'table';
  return (
    <section className="table-view" aria-label="Results table">
      <div className="table-view-tools">
        <fieldset className="chart-picker">
          <legend className="visually-hidden">Show as</legend>
          {KINDS.map(([k, label]) => (
            <label key={k} className={k === kind ? 'active' : undefined}>
              <input
                type="radio"
                name="table-chart"
                value={k}
                checked={k === kind}
                disabled={!usable(k)}
                onChange={() => props.onChart({ ...chart, kind: k })}
              />
              {label}
            </label>
          ))}
        </fieldset>
        {kind !== 'table' && numbers.length > 1 && (
          <label className="chart-value">
            Value{' '}
            <select
              value={chart.value ?? numbers[0]}
              onChange={(e) => props.onChart({ ...chart, value: e.target.value })}
            >
              {numbers.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </label>
        )}
        {results.truncated && (
          <span className="muted">
            The first {results.rows.length.toLocaleString('en-US')} of{' '}
            {results.total_rows.toLocaleString('en-US')} rows.
          </span>
        )}
      </div>
      <div className={`table-view-body table-view-${kind}`}>
        <Visualization
          kind={kind}
          options={chart.value ? { value: chart.value } : {}}
          data={{ type: 'Table', results: results as unknown as Record<string, unknown> }}
          title="Results"
        />
      </div>
    </section>
  );
}
