import { Link } from '../../../router';
import type { Drill } from '../dashboard-address';
import { cellText, type Table } from './data';

/**
 * The `table` kind (and any kind a result cannot be drawn as): the result's rows and
 * columns; a value of a field is a link to its events on the search page.
 */
export function DataTable({ t, caption, drill }: { t: Table; caption: string; drill?: Drill | undefined }) {
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
              {row.map((cell, j) => {
                const field = drill && t.fieldOf?.[j];
                const text = cellText(cell);
                return (
                  // biome-ignore lint/suspicious/noArrayIndexKey: cells are positional
                  <td key={j}>
                    {field ? (
                      <Link
                        className="dash-drill"
                        to={drill.values({ [field]: t.raw ? t.raw[i]?.[j] : cell })}
                        title={`Search ${field}: ${text || '(none)'}`}
                      >
                        {text || '(none)'}
                      </Link>
                    ) : (
                      text
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
