import { useState } from 'react';
import type { TableResults } from '../../api';
import { formatCount } from '../../format';
import { Visualization } from '../dashboards/charts';
import { numberColumns } from '../dashboards/table-data';
import './table-view.css';

/** How a table of a query with pipes is shown: the table itself or a chart over a number column. */
export interface TableChart {
  kind: 'table' | 'bar' | 'line' | 'area' | 'pie' | 'number';
  /** The number column charted (the first when absent). */
  value?: string;
}

/** Rows drawn at once as a table: all 10,000 of a `limit 10000` (100,000 cells) held the page 0.8 s. */
export const TABLE_PAGE = 200;

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
  const [page, setPage] = useState(0);
  if (!results) return null;
  const numbers = numberColumns(results);
  const hasTime = results.columns.some((c) => c.type === 'time');
  const usable = (k: TableChart['kind']) =>
    k === 'table' || (numbers.length > 0 && ((k !== 'line' && k !== 'area') || hasTime));
  const kind = usable(chart.kind) ? chart.kind : 'table';
  const pages = kind === 'table' ? Math.ceil(results.rows.length / TABLE_PAGE) : 1;
  const at = Math.min(page, Math.max(0, pages - 1)) * TABLE_PAGE;
  const shown = pages > 1 ? { ...results, rows: results.rows.slice(at, at + TABLE_PAGE) } : results;
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
        {pages > 1 && (
          <span className="table-pager">
            <button
              type="button"
              className="secondary small"
              disabled={at === 0}
              onClick={() => setPage(at / TABLE_PAGE - 1)}
            >
              Previous rows
            </button>
            <span role="status">
              Rows {formatCount(at + 1)}–{formatCount(Math.min(at + TABLE_PAGE, results.rows.length))} of{' '}
              {formatCount(results.rows.length)}
            </span>
            <button
              type="button"
              className="secondary small"
              disabled={at + TABLE_PAGE >= results.rows.length}
              onClick={() => setPage(at / TABLE_PAGE + 1)}
            >
              Next rows
            </button>
          </span>
        )}
      </div>
      {/* A long table scrolls: it takes the keyboard (axe scrollable-region-focusable). */}
      <div className={`table-view-body table-view-${kind}`} tabIndex={kind === 'table' ? 0 : undefined}>
        <Visualization
          kind={kind}
          options={chart.value ? { value: chart.value } : {}}
          data={{ type: 'Table', results: shown as unknown as Record<string, unknown> }}
          title="Results"
        />
      </div>
    </section>
  );
}
