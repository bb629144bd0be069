import { Fragment, type ReactNode } from 'react';
import type { Paginated } from '../api';
import { formatCount } from '../format';
import { cls } from './util';
import './components.css';

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** Hidden on phones. */
  wide?: boolean;
  className?: string;
}

/**
 * A list page's table: "Loading…" until there is data (nothing on an error: the page
 * shows it), the count, an empty state, and a last column of row actions.
 */
export function ListTable<T>(props: {
  /** The list as `useApi` gives it: null data while loading (or "mine" is not ready). */
  list: { data: Paginated<T> | null; error: string | null };
  columns: readonly Column<T>[];
  /** By default the row's `id`. */
  rowKey?: (row: T) => string | number;
  /** What one row is and what several are: "1 task", "3 tasks". */
  noun: readonly [one: string, many: string];
  /** Shown instead of the table when there are no rows; without it the table shows. */
  empty?: ReactNode;
  /** Which rows these are when the API has more: "newest", "first". */
  shown?: string;
  actions?: (row: T) => ReactNode;
  /** A row to show after a row (its details). */
  after?: (row: T) => ReactNode;
  className?: string;
}) {
  const { columns, actions } = props;
  const { data, error } = props.list;
  const rowKey = props.rowKey ?? ((row: T) => (row as { id: number }).id);
  if (!data) return error ? null : <p className="muted">Loading…</p>;
  if (data.results.length === 0 && props.empty) return <p className="muted">{props.empty}</p>;
  const [one, many] = props.noun;
  return (
    <>
      <p className="muted">
        {formatCount(data.count)} {data.count === 1 ? one : many}
        {props.shown && data.count > data.results.length
          ? ` (showing the ${props.shown} ${formatCount(data.results.length)})`
          : ''}
      </p>
      <div className="table-wrap">
        <table className={cls('list', props.className)}>
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.header} scope="col" className={c.wide ? 'wide-only' : undefined}>
                  {c.header}
                </th>
              ))}
              {actions && (
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {data.results.map((row) => (
              <Fragment key={rowKey(row)}>
                <tr>
                  {columns.map((c) => (
                    <td key={c.header} className={cls(c.wide && 'wide-only', c.className) || undefined}>
                      {c.cell(row)}
                    </td>
                  ))}
                  {actions && (
                    <td className="actions-cell">
                      <div className="row-actions">{actions(row)}</div>
                    </td>
                  )}
                </tr>
                {props.after?.(row)}
              </Fragment>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
