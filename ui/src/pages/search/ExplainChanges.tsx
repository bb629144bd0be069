import { Template } from '../../components/Patterns';
import { formatCount } from '../../format';
import { type Change, changeName, DIRECTION_LABEL, fieldText, ratioText } from './explain';

const DIRECTION_MEANS = {
  new: 'None in the baseline window',
  up: 'More often than in the baseline window',
  down: 'Less often than in the baseline window',
  gone: 'None in the focus window',
} as const;

const score = (s: number) => (s >= 100 ? formatCount(Math.round(s)) : s.toFixed(1));

/**
 * The changes of an Explain query, most significant first: what changed (a template with
 * its variables marked, or `field = value`), a direction badge, the counts in both windows,
 * the ratio of their rates and the score as a bar (against the first's). Clicking what
 * changed, or Filter in, searches for it; Exclude searches without it.
 */
export function ExplainChanges(props: {
  changes: Change[];
  onFilter: (change: Change) => void;
  onExclude: (change: Change) => void;
}) {
  const { changes } = props;
  const top = Math.max(1, ...changes.map((c) => c.score));
  return (
    <table className="explain-changes" aria-label="Changes">
      <thead>
        <tr>
          <th scope="col">Change</th>
          <th scope="col" className="num">
            Focus
          </th>
          <th scope="col" className="num">
            Baseline
          </th>
          <th scope="col" className="num">
            Ratio
          </th>
          <th scope="col">Score</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) => {
          const name = changeName(c);
          return (
            <tr key={c.term} className="explain-change">
              <td>
                <div className="explain-what">
                  <span
                    className={`badge explain-dir explain-${c.direction}`}
                    title={DIRECTION_MEANS[c.direction]}
                  >
                    {DIRECTION_LABEL[c.direction]}
                  </span>
                  <button
                    type="button"
                    className="explain-term"
                    title={`Search ${c.term}`}
                    onClick={() => props.onFilter(c)}
                  >
                    {c.kind === 'pattern' ? (
                      <Template text={c.template || '(empty)'} />
                    ) : (
                      <code className="explain-field">{fieldText(c)}</code>
                    )}
                  </button>
                </div>
              </td>
              <td className="num" title={`${c.focus_rate} a minute`}>
                {formatCount(c.focus_count)}
              </td>
              <td className="num" title={`${c.baseline_rate} a minute`}>
                {formatCount(c.baseline_count)}
              </td>
              <td className="num">{ratioText(c.ratio)}</td>
              <td className="explain-score">
                <span className="explain-score-track" aria-hidden="true">
                  <span
                    className="explain-score-bar"
                    style={{ width: `${Math.max(2, (c.score / top) * 100)}%` }}
                  />
                </span>
                <span className="explain-score-value">{score(c.score)}</span>
              </td>
              <td className="pattern-actions">
                <button
                  type="button"
                  className="secondary small"
                  aria-label={`Filter in ${name}`}
                  onClick={() => props.onFilter(c)}
                >
                  Filter in
                </button>
                <button
                  type="button"
                  className="secondary small"
                  aria-label={`Exclude ${name}`}
                  onClick={() => props.onExclude(c)}
                >
                  Exclude
                </button>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
