import { cellText, type Table } from './data';

/** The `table` kind (and any kind a result cannot be drawn as): the result's rows and columns. */
export function DataTable({ t, caption }: { t: Table; caption: string }) {
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
