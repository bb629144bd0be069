import { Fragment, type ReactNode } from 'react';
import { formatCount, formatTs } from '../format';

/**
 * A Patterns query's results (docs/api/patterns.md) as the search page's Patterns tab and a dashboard's
 * Patterns widget show them: each template with its variables marked, count, share, a
 * sparkline over the range, first and last seen, and a "new" badge.
 */

/** One pattern of a Patterns query's results. */
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
  /** Every id of this template text (one per app it was mined in), most common first. */
  pattern_ids: string[];
  /** The apps its events came from, most first (a few), and how many more. */
  apps: Array<{ app: string; count: number }>;
  apps_other: number;
}

/** The query-language term selecting a row's events: all its ids. */
export const patternTerm = (p: Pick<PatternRow, 'pattern_id' | 'pattern_ids'>) => {
  const ids = p.pattern_ids?.length ? p.pattern_ids : [p.pattern_id];
  return ids.length === 1 ? `pattern_id:${ids[0]}` : `pattern_id:(${ids.join(' OR ')})`;
};

/** Where a row's events came from: "orders (4), billing (3) and 2 more apps". */
export function appsText(p: Pick<PatternRow, 'apps' | 'apps_other'>): string {
  const named = (p.apps ?? []).map((a) => `${a.app} (${formatCount(a.count)})`).join(', ');
  if (!p.apps_other) return named;
  return `${named} and ${formatCount(p.apps_other)} more app${p.apps_other === 1 ? '' : 's'}`;
}

export interface PatternsResults {
  total: number;
  patterns: PatternRow[];
  other: number;
}

/** Whether a query's results are a Patterns query's. */
export const isPatternsResults = (r: unknown): r is PatternsResults =>
  typeof r === 'object' && r !== null && Array.isArray((r as { patterns?: unknown }).patterns);

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

const share = (s: number) => `${(s * 100).toFixed(s < 0.01 ? 2 : 1)} %`;

/**
 * The patterns as a table, most common first. `actions` adds a cell of buttons to each
 * line, `after` a line under it (the samples the tab opens); `compact` (a widget's few
 * columns) leaves out when each was first and last seen.
 */
export function PatternsTable(props: {
  results: PatternsResults;
  caption?: string;
  compact?: boolean;
  /** What the new badge means for these results (its tooltip). */
  newMeans?: string;
  actions?: (p: PatternRow) => ReactNode;
  after?: (p: PatternRow) => ReactNode;
}) {
  const { results, actions, after, compact } = props;
  const newTitle = props.newMeans ?? 'No event of it before the range (or in the range compared to)';
  if (results.patterns.length === 0) return <p className="muted">No event in this range has a pattern.</p>;
  return (
    <>
      <p role="status" className="muted">
        {formatCount(results.patterns.length)} pattern{results.patterns.length === 1 ? '' : 's'} of{' '}
        {formatCount(results.total)} events
        {results.other ? ` (${formatCount(results.other)} in patterns not listed)` : ''}
      </p>
      <table className="patterns-table">
        {props.caption && <caption className="visually-hidden">{props.caption}</caption>}
        <thead>
          <tr>
            <th scope="col">Pattern</th>
            <th scope="col">Count</th>
            <th scope="col">Share</th>
            <th scope="col">Over the range</th>
            {!compact && <th scope="col">Last seen</th>}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {results.patterns.map((p) => (
            <Fragment key={p.pattern_id}>
              <tr className="pattern-row">
                <td>
                  {p.new && (
                    <span className="badge badge-new" title={newTitle}>
                      new
                    </span>
                  )}{' '}
                  <Template text={p.template || '(empty)'} />
                  {(!compact || (p.apps?.length ?? 0) + (p.apps_other ?? 0) > 1) && (
                    <div className="muted small-text pattern-from">
                      {!compact && <>first seen {formatTs(p.first_seen)}</>}
                      {!compact && p.apps?.length ? ' · ' : ''}
                      {p.apps?.length ? <span className="pattern-apps">from {appsText(p)}</span> : null}
                    </div>
                  )}
                </td>
                <td className="num">{formatCount(p.count)}</td>
                <td className="num">{share(p.share)}</td>
                <td>
                  <Sparkline series={p.series} label={`${formatCount(p.count)} events over the range`} />
                </td>
                {!compact && <td>{formatTs(p.last_seen)}</td>}
                {actions && <td className="pattern-actions">{actions(p)}</td>}
              </tr>
              {after?.(p)}
            </Fragment>
          ))}
        </tbody>
      </table>
    </>
  );
}
