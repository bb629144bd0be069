import { formatCount, formatTs } from '../../../format';
import { cellText, points, type QueryData } from './data';

/** The `list` kind: a Search's events by time and message, else each category with its count. */
export function List({ data }: { data: QueryData }) {
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
