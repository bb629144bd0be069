import { cellText, points, type QueryData } from './data';

/** The `number` kind: one figure large (a Summary's first metric, a Search's total), the others beside it. */
export function BigNumber({ data }: { data: QueryData }) {
  const r = data.results ?? {};
  let stats: Array<[string, unknown]>;
  if (r.totals && typeof r.totals === 'object') {
    const all = Object.entries(r.totals as Record<string, unknown>);
    // `count` comes with every Summary; it leads only when it is all there is.
    stats =
      all.length > 1 ? [...all.filter(([k]) => k !== 'count'), ...all.filter(([k]) => k === 'count')] : all;
  } else if (typeof r.total === 'number') stats = [['events', r.total]];
  else {
    const pts = points(data);
    stats = [['total', pts.reduce((s, p) => s + p.value, 0)]];
  }
  const [first, ...rest] = stats;
  if (!first) return <p className="muted">No data.</p>;
  return (
    <div className="dash-number">
      <p className="dash-number-main">
        <span className="dash-number-value">{cellText(first[1])}</span>
        <span className="dash-number-label">{first[0]}</span>
      </p>
      {rest.length > 0 && (
        <dl className="dash-number-rest">
          {rest.map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{cellText(v)}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  );
}
