import { type KeyboardEvent, useEffect, useId, useState } from 'react';
import { errorText, runQuery, type TimeRange } from '../../api';
import { formatCount } from '../../format';
import type { FieldInfo } from './FieldList';
import { filterTerm } from './query';

const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

interface TopN {
  total: number;
  items: { value: unknown; count: number }[];
  other: number;
}

/** What a type mark shows, and says to assistive technology. */
const TYPE_MARKS = {
  string: { mark: 'a', name: 'text' },
  number: { mark: '#', name: 'number' },
  ip: { mark: 'IP', name: 'IP address' },
  time: { mark: '◷', name: 'time' },
  bool: { mark: '⊤', name: 'true or false' },
} as const;

/**
 * A field's kind as its mark shows it: the API's type, or true/false for a text field
 * whose sampled values are all booleans (the API counts those as text).
 */
export function fieldKind(f: FieldInfo): keyof typeof TYPE_MARKS {
  const top = f.top;
  if (f.type === 'string' && top.length > 0 && top.every((v) => typeof v.value === 'boolean')) {
    const counted = top.reduce((n, v) => n + v.count, 0);
    if (counted === f.count) return 'bool';
  }
  return f.type;
}

/** A share of `of` as the list writes it: whole percents, "<1 %" for a few. */
function percent(n: number, of: number): string {
  if (of <= 0) return '0 %';
  const p = (n / of) * 100;
  return p > 0 && p < 1 ? '<1 %' : `${Math.round(p)} %`;
}

/**
 * One field of the list: its type mark, its name and count (which opens its values), and
 * a toggle that shows it as a column of the results. Open, its top values, each with its
 * share of the sample as a bar (the count on hover, and read out), "Filter for" and
 * "Filter out"; "Top values" counts it over every matching event (a TopN query).
 */
export function FieldItem(props: {
  field: FieldInfo;
  /** Events the list was computed from (its values' shares are of these). */
  events: number;
  expanded: boolean;
  onToggle: (name: string) => void;
  onFilter: (term: string) => void;
  /** Whether it is a column of the results; undefined when the list offers no columns. */
  column: boolean | undefined;
  /** A column cannot be taken away when it is the last one. */
  lastColumn: boolean;
  onColumn: (name: string, on: boolean) => void;
  onKeyDown: (e: KeyboardEvent<HTMLButtonElement>) => void;
  query: string;
  timeRange: TimeRange | null;
}) {
  const { field: f, expanded, onFilter } = props;
  const valuesId = useId();
  const [topN, setTopN] = useState<TopN | 'loading' | { error: string } | null>(null);
  const numeric = f.type === 'number';
  const kind = TYPE_MARKS[fieldKind(f)];
  // Counts of another query or time range no longer apply.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the search changes
  useEffect(() => setTopN(null), [props.query, props.timeRange]);

  const runTopN = () => {
    if (!props.timeRange) return;
    setTopN('loading');
    runQuery<TopN>(
      {
        type: 'TopN',
        params: { query: props.query, time_range: props.timeRange, field: f.name, n: 10 },
      },
      { signal: AbortSignal.timeout(60_000), onUpdate: () => {} },
    )
      .then((q) =>
        setTopN(
          q.status === 'ERROR' || !q.results.items
            ? { error: q.error ?? 'failed' }
            : { total: q.results.total ?? 0, items: q.results.items, other: q.results.other ?? 0 },
        ),
      )
      .catch((err) => setTopN({ error: errorText(err) }));
  };

  const counted = topN && typeof topN === 'object' && 'items' in topN ? topN : null;
  const values: { value: unknown; count: number }[] = counted ? counted.items : f.top;
  // The sample's values are shares of the sample; Top values' of the events with the field.
  const base = counted ? counted.total : props.events;
  const baseText = counted ? `events with ${f.name}` : 'sampled events';

  return (
    <li className="field">
      <div className="field-row">
        <span className={`field-type t-${fieldKind(f)}`} role="img" aria-label={kind.name} title={kind.name}>
          {kind.mark}
        </span>
        <button
          type="button"
          className="field-name"
          aria-expanded={expanded}
          aria-controls={valuesId}
          onClick={() => props.onToggle(f.name)}
          onKeyDown={props.onKeyDown}
        >
          {/* The name is what is shown (axe: label-content-name-mismatch), the count after a space. */}
          <span className="field-label">{f.name}</span>{' '}
          <span className="field-count muted">{formatCount(f.count)}</span>
        </button>
        {props.column !== undefined && (
          <button
            type="button"
            className="field-column"
            aria-pressed={props.column}
            aria-label={`Show ${f.name} as a column`}
            title={props.column ? `Remove the ${f.name} column` : `Add ${f.name} as a column`}
            disabled={props.column && props.lastColumn}
            onClick={() => props.onColumn(f.name, !props.column)}
          >
            <span aria-hidden="true">{props.column ? '✓' : '⊞'}</span>
          </button>
        )}
      </div>
      {expanded && (
        <div id={valuesId} className="field-values">
          {values.length === 0 ? (
            <p className="muted small-text">No values to list ({f.type}).</p>
          ) : (
            <ul>
              {values.map((v) => {
                const text = valueText(v.value);
                const share = base > 0 ? Math.min(100, (v.count / base) * 100) : 0;
                const counts = `${formatCount(v.count)} of ${formatCount(base)} ${baseText}`;
                return (
                  <li key={text} className="field-value">
                    <div className="value-line">
                      <span className="value-text" title={text}>
                        {text === '' ? <em>(empty)</em> : text}
                      </span>
                      <span className="value-share" title={counts}>
                        {percent(v.count, base)}
                        <span className="visually-hidden">, {counts}</span>
                      </span>
                      <button
                        type="button"
                        className="icon-button"
                        aria-label={`Filter for ${f.name}:${text}`}
                        title={`Filter for ${f.name}:${text}`}
                        onClick={() => onFilter(filterTerm(f.name, text, { numeric }))}
                      >
                        +
                      </button>
                      <button
                        type="button"
                        className="icon-button"
                        aria-label={`Filter out ${f.name}:${text}`}
                        title={`Filter out ${f.name}:${text}`}
                        onClick={() => onFilter(filterTerm(f.name, text, { numeric, negate: true }))}
                      >
                        −
                      </button>
                    </div>
                    <div className="value-bar" aria-hidden="true" title={counts}>
                      <span style={{ width: `${share}%` }} />
                    </div>
                  </li>
                );
              })}
            </ul>
          )}
          <div className="field-actions">
            {f.type !== 'time' && (
              <button
                type="button"
                className="secondary small"
                onClick={runTopN}
                disabled={topN === 'loading'}
              >
                Top values
              </button>
            )}
            <span className="muted small-text" role="status">
              {topN === 'loading'
                ? 'Counting…'
                : topN && 'error' in topN
                  ? `Top values failed: ${topN.error}`
                  : counted
                    ? `Top 10 of ${formatCount(counted.total)} events with ${f.name}`
                    : `In ${percent(f.count, props.events)} of the sample`}
            </span>
          </div>
        </div>
      )}
    </li>
  );
}
