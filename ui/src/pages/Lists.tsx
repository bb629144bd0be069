import type { ReactNode } from 'react';
import type { Paginated } from '../api';
import { formatCount, formatIso } from '../format';
import { useApi } from '../useApi';

interface Column<T> {
  label: string;
  cell: (row: T) => ReactNode;
  className?: string;
}

/** A heading and the first page of a list endpoint, as a table. */
function ListPage<T extends { id: number }>(props: {
  title: string;
  path: string;
  /** Singular and plural: "1 task", "2 tasks". */
  noun: readonly [string, string];
  columns: Column<T>[];
  empty: string;
}) {
  const { data, error, loading } = useApi<Paginated<T>>(`${props.path}?page_size=200`);
  return (
    <div className="page">
      <h1>{props.title}</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {loading && !data && <p className="muted">Loading…</p>}
      {data && data.results.length === 0 && <p className="muted">{props.empty}</p>}
      {data && data.results.length > 0 && (
        <>
          <p className="muted">
            {formatCount(data.count)} {data.count === 1 ? props.noun[0] : props.noun[1]}
            {data.count > data.results.length
              ? ` (showing the first ${formatCount(data.results.length)})`
              : ''}
          </p>
          <div className="table-wrap">
            <table className="list">
              <thead>
                <tr>
                  {props.columns.map((c) => (
                    <th key={c.label} scope="col" className={c.className}>
                      {c.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {data.results.map((row) => (
                  <tr key={row.id}>
                    {props.columns.map((c) => (
                      <td key={c.label} className={c.className}>
                        {c.cell(row)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

interface Dashboard {
  id: number;
  title: string;
  description: string;
  widgets?: unknown[];
  updated_at: string;
}

export function DashboardsPage() {
  return (
    <ListPage<Dashboard>
      title="Dashboards"
      path="/api/dashboards"
      noun={['dashboard', 'dashboards']}
      empty="No dashboards yet."
      columns={[
        { label: 'Title', cell: (d) => d.title },
        { label: 'Description', cell: (d) => d.description, className: 'wide-only' },
        { label: 'Widgets', cell: (d) => (Array.isArray(d.widgets) ? d.widgets.length : '') },
        { label: 'Updated', cell: (d) => formatIso(d.updated_at), className: 'wide-only' },
      ]}
    />
  );
}

// The working lists live in their own folders; the shell imports them from here.
export { ReportsPage } from './reports/ReportsPage';
export { TasksPage } from './tasks/TasksPage';
export { TriggersPage } from './triggers/TriggersPage';
