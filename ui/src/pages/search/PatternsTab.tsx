import { useEffect, useState } from 'react';
import { errorText, type GenericQuery, type LogEvent, runQuery } from '../../api';
import { type PatternsResults, PatternsTable, patternTerm } from '../../components/Patterns';
import { formatTs } from '../../format';

/**
 * The search page's Patterns tab: the message templates of the events shown, one row per
 * template text (the apps it came from named), most common first, each with its count,
 * share, a sparkline over the range, first and last seen and a "new" badge when no event of
 * it matched the query before the range; filter in and exclude (all its ids), and its
 * samples (which open the event).
 */
export function PatternsTab(props: {
  query: string;
  window: { ts_from: number; ts_to: number } | null;
  onFilter: (term: string) => void;
  onOpenEvent: (evId: string) => void;
}) {
  const { query, window } = props;
  const [results, setResults] = useState<PatternsResults | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);

  useEffect(() => {
    if (!window) return;
    const ctl = new AbortController();
    setResults(null);
    setError(null);
    runQuery<PatternsResults>(
      // Without compare_to, new is first seen inside the range (docs/api/patterns.md).
      { type: 'Patterns', params: { query, time_range: window, n: 100 } },
      {
        signal: ctl.signal,
        onUpdate: (q: GenericQuery<PatternsResults>) => {
          const r = q.results;
          if (r?.patterns && r.total !== undefined)
            setResults({ total: r.total, patterns: r.patterns, other: r.other ?? 0 });
          if (q.status === 'ERROR') setError(q.error ?? 'The patterns could not be computed.');
        },
      },
    ).catch((err) => {
      if (!ctl.signal.aborted) setError(errorText(err));
    });
    return () => ctl.abort();
  }, [query, window]);

  if (error)
    return (
      <p role="alert" className="error">
        {error}
      </p>
    );
  if (!results)
    return (
      <p role="status" className="muted">
        Grouping messages…
      </p>
    );
  return (
    <section aria-label="Patterns" className="patterns">
      <PatternsTable
        results={results}
        newMeans="First seen in this range: no event of it matched the query before"
        actions={(p) => (
          <>
            <button type="button" className="secondary small" onClick={() => props.onFilter(patternTerm(p))}>
              Filter in
            </button>
            <button
              type="button"
              className="secondary small"
              onClick={() => props.onFilter(`-${patternTerm(p)}`)}
            >
              Exclude
            </button>
            <button
              type="button"
              className="secondary small"
              aria-expanded={open === p.pattern_id}
              onClick={() => setOpen(open === p.pattern_id ? null : p.pattern_id)}
            >
              Samples
            </button>
          </>
        )}
        after={(p) =>
          open === p.pattern_id && (
            <tr className="pattern-samples">
              <td colSpan={6}>
                <ul aria-label={`Samples of ${p.template}`}>
                  {p.samples.map((s) => (
                    <li key={s.ev_id}>
                      <button
                        type="button"
                        className="link-button"
                        onClick={() => props.onOpenEvent(s.ev_id)}
                      >
                        {formatTs(s.ts)}
                      </button>{' '}
                      <span className="event-message-inline">{s.message ?? ''}</span>
                    </li>
                  ))}
                </ul>
              </td>
            </tr>
          )
        }
      />
    </section>
  );
}

export type { LogEvent };
