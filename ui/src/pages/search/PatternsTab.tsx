import { useEffect, useState } from 'react';
import { errorText, type GenericQuery, type LogEvent, runQuery } from '../../api';
import { formatCount, formatTs } from '../../format';

/** One pattern of a Patterns query's results (API §20). */
export interface PatternRow {
  pattern_id: string;
  template: string;
  count: number;
  share: number;
  first_seen: number;
  last_seen: number;
  samples: Array<{ ev_id: string; ts: number; message: string | null }>;
  series: number[];
  new: boolean;
  previous_count: number | null;
}

interface PatternsResults {
  total: number;
  patterns: PatternRow[];
  other: number;
}

/** A template with its variables (`<*>`) marked. */
export function Template({ text }: { text: string }) {
  const parts = text.split('<*>');
  return (
    <code className="pattern-template">
      {parts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one text, in order
        <span key={i}>
          {p}
          {i < parts.length - 1 && <mark className="pattern-var">&lt;*&gt;</mark>}
        </span>
      ))}
    </code>
  );
}

/** A series as a small line (its counts over the range, left to right). */
function Sparkline({ series, label }: { series: number[]; label: string }) {
  const max = Math.max(1, ...series);
  const w = 100;
  const h = 20;
  const step = series.length > 1 ? w / (series.length - 1) : w;
  const points = series.map((v, i) => `${(i * step).toFixed(1)},${(h - (v / max) * (h - 2) - 1).toFixed(1)}`);
  return (
    <svg className="sparkline" viewBox={`0 0 ${w} ${h}`} width={w} height={h} role="img" aria-label={label}>
      <polyline points={points.join(' ')} fill="none" stroke="currentColor" strokeWidth="1.5" />
    </svg>
  );
}

/**
 * The search page's Patterns tab: the message templates of the events shown, most common
 * first, each with its count, share, a sparkline over the range, first and last seen and a
 * "new" badge when it had no event in the period just before; filter in, exclude, and its
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
    const span = window.ts_to - window.ts_from;
    runQuery<PatternsResults>(
      {
        type: 'Patterns',
        params: {
          query,
          time_range: window,
          n: 100,
          // The period just before, as long: what is new since then.
          compare_to: { ts_from: Math.floor(window.ts_from - span), ts_to: Math.floor(window.ts_from) },
        },
      },
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
  if (results.patterns.length === 0) return <p className="muted">No event in this range has a pattern.</p>;
  return (
    <section aria-label="Patterns" className="patterns">
      <p role="status" className="muted">
        {formatCount(results.patterns.length)} patterns of {formatCount(results.total)} events
        {results.other ? ` (${formatCount(results.other)} in patterns not listed)` : ''}
      </p>
      <table className="patterns-table">
        <thead>
          <tr>
            <th scope="col">Pattern</th>
            <th scope="col">Count</th>
            <th scope="col">Share</th>
            <th scope="col">Over the range</th>
            <th scope="col">Last seen</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {results.patterns.map((p) => (
            <PatternLine
              key={p.pattern_id}
              p={p}
              expanded={open === p.pattern_id}
              onToggle={() => setOpen(open === p.pattern_id ? null : p.pattern_id)}
              onFilter={props.onFilter}
              onOpenEvent={props.onOpenEvent}
            />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function PatternLine(props: {
  p: PatternRow;
  expanded: boolean;
  onToggle: () => void;
  onFilter: (term: string) => void;
  onOpenEvent: (evId: string) => void;
}) {
  const { p } = props;
  return (
    <>
      <tr className="pattern-row">
        <td>
          {p.new && <span className="badge badge-new">new</span>} <Template text={p.template || '(empty)'} />
          <div className="muted small-text">first seen {formatTs(p.first_seen)}</div>
        </td>
        <td className="num">{formatCount(p.count)}</td>
        <td className="num">{(p.share * 100).toFixed(p.share < 0.01 ? 2 : 1)} %</td>
        <td>
          <Sparkline series={p.series} label={`${formatCount(p.count)} events over the range`} />
        </td>
        <td>{formatTs(p.last_seen)}</td>
        <td className="pattern-actions">
          <button
            type="button"
            className="secondary small"
            onClick={() => props.onFilter(`pattern_id:${p.pattern_id}`)}
          >
            Filter in
          </button>
          <button
            type="button"
            className="secondary small"
            onClick={() => props.onFilter(`-pattern_id:${p.pattern_id}`)}
          >
            Exclude
          </button>
          <button
            type="button"
            className="secondary small"
            aria-expanded={props.expanded}
            onClick={props.onToggle}
          >
            Samples
          </button>
        </td>
      </tr>
      {props.expanded && (
        <tr className="pattern-samples">
          <td colSpan={6}>
            <ul aria-label={`Samples of ${p.template}`}>
              {p.samples.map((s) => (
                <li key={s.ev_id}>
                  <button type="button" className="link-button" onClick={() => props.onOpenEvent(s.ev_id)}>
                    {formatTs(s.ts)}
                  </button>{' '}
                  <span className="event-message-inline">{s.message ?? ''}</span>
                </li>
              ))}
            </ul>
          </td>
        </tr>
      )}
    </>
  );
}

export type { LogEvent };
