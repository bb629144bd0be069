import { formatCount, formatTs } from '../../../format';
import type { Drill } from '../dashboard-address';
import { cellText, points, type QueryData } from './data';
import { PointLink } from './point-link';

/**
 * The `list` kind: a Search's events by time and message, else each category with its
 * count (a category of `field` a link to its events).
 */
export function List({ data, field, drill }: { data: QueryData; field?: string; drill?: Drill | undefined }) {
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
  const pts = points(data, field);
  if (!pts.length) return <p className="muted">No data.</p>;
  return (
    <ul className="dash-list">
      {pts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat
        <li key={i}>
          <PointLink point={p} drill={drill} /> <span className="muted">{formatCount(p.value)}</span>
        </li>
      ))}
    </ul>
  );
}
