import { memo, useEffect, useId, useState } from 'react';
import { type Answer, ApiError, api, errorText, isAbort, runQuery, type TimeRange } from '../../api';
import { formatCount } from '../../format';
import { filterTerm } from './query';

export type FieldsResponse = Answer<'/api/fields'>;
export type FieldInfo = FieldsResponse['fields'][number];

/** `GET /api/fields` for a query over a time range. */
export const fetchFields = (query: string, timeRange: TimeRange, signal?: AbortSignal) =>
  api<FieldsResponse>(
    `/api/fields?${new URLSearchParams({ query, time_range: JSON.stringify(timeRange) })}`,
    { signal },
  );

const valueText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

interface TopN {
  total: number;
  items: { value: unknown; count: number; share: number }[];
  other: number;
}

/**
 * The fields of the events a search matched (`GET /api/fields`, from the newest 10,000),
 * with counts; a field opens to its top values, each with "Filter for" and "Filter out".
 * "Top values" counts a field over every matching event (a TopN query).
 */
export const FieldList = memo(function FieldList(props: {
  query: string;
  timeRange: TimeRange | null;
  onFilter: (term: string) => void;
}) {
  const { query, timeRange, onFilter } = props;
  const headingId = useId();
  const listId = useId();
  // Open beside the results on wide screens, folded above them on phones.
  const [open, setOpen] = useState(() => !window.matchMedia?.('(max-width: 720px)').matches);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  // What was read is kept with the search it is of, and shown only for that search: while
  // another's loads the list says so, never offering values (and their filters) of another
  // query or window.
  const searchKey = JSON.stringify([query, timeRange]);
  const [loaded, setLoaded] = useState<{ key: string; data: FieldsResponse | null; error: string | null }>();
  const { data, error } = loaded?.key === searchKey ? loaded : { data: null, error: null };

  useEffect(() => {
    if (!timeRange) return;
    const key = JSON.stringify([query, timeRange]);
    const ctl = new AbortController();
    fetchFields(query, timeRange, ctl.signal)
      .then((d) => {
        // A late answer for a search replaced since is dropped.
        if (!ctl.signal.aborted) setLoaded({ key, data: d, error: null });
      })
      .catch((err) => {
        if (isAbort(err) || ctl.signal.aborted) return;
        // A query the server refuses is reported once, by the search.
        const error = err instanceof ApiError && err.status === 400 ? 'none for this query.' : errorText(err);
        setLoaded({ key, data: null, error });
      });
    return () => ctl.abort();
  }, [query, timeRange]);

  const toggle = (name: string) =>
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(name)) next.add(name);
      return next;
    });

  return (
    <section aria-labelledby={headingId} className={open ? 'field-panel open' : 'field-panel'}>
      <div className="field-panel-head">
        <h2 id={headingId}>
          <button
            type="button"
            className="field-panel-toggle"
            aria-expanded={open}
            aria-controls={listId}
            onClick={() => setOpen((o) => !o)}
          >
            Fields
          </button>
        </h2>
        {data && open && (
          <span className="muted small-text">
            {data.sampled ? `newest ${formatCount(data.events)}` : `${formatCount(data.events)} events`}
          </span>
        )}
      </div>
      <div id={listId} className="field-panel-body" hidden={!open}>
        {error && <p className="muted small-text">Fields: {error}</p>}
        {!data && !error && <p className="muted small-text">Loading fields…</p>}
        {data && data.fields.length === 0 && <p className="muted small-text">No fields.</p>}
        {data && data.fields.length > 0 && (
          <ul className="field-list">
            {data.fields.map((f) => (
              <Field
                key={f.name}
                field={f}
                events={data.events}
                expanded={expanded.has(f.name)}
                onToggle={toggle}
                onFilter={onFilter}
                query={query}
                timeRange={timeRange}
              />
            ))}
          </ul>
        )}
      </div>
    </section>
  );
});

function Field(props: {
  field: FieldInfo;
  events: number;
  expanded: boolean;
  onToggle: (name: string) => void;
  onFilter: (term: string) => void;
  query: string;
  timeRange: TimeRange | null;
}) {
  const { field: f, expanded, onFilter } = props;
  const valuesId = useId();
  const [topN, setTopN] = useState<TopN | 'loading' | { error: string } | null>(null);
  const numeric = f.type === 'number';
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
            : {
                total: q.results.total ?? 0,
                items: q.results.items,
                other: q.results.other ?? 0,
              },
        ),
      )
      .catch((err) => setTopN({ error: errorText(err) }));
  };

  const values: { value: unknown; count: number }[] =
    topN && typeof topN === 'object' && 'items' in topN ? topN.items : f.top;
  const share = (n: number) => (props.events > 0 ? Math.round((n / props.events) * 100) : 0);

  return (
    <li className="field">
      <button
        type="button"
        className="field-name"
        aria-expanded={expanded}
        aria-controls={valuesId}
        onClick={() => props.onToggle(f.name)}
      >
        {/* The name is what is shown (axe: label-content-name-mismatch), the count after a space. */}
        <span className="field-label">{f.name}</span>{' '}
        <span className="field-count muted">{formatCount(f.count)}</span>
      </button>
      {expanded && (
        <div id={valuesId} className="field-values">
          {values.length === 0 ? (
            <p className="muted small-text">No values to list ({f.type}).</p>
          ) : (
            <ul>
              {values.map((v) => {
                const text = valueText(v.value);
                return (
                  <li key={text}>
                    <span className="value-text" title={text}>
                      {text === '' ? <em>(empty)</em> : text}
                    </span>
                    <span className="value-count muted" title={`${share(v.count)} % of the sample`}>
                      {formatCount(v.count)}
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
                  : topN
                    ? `Top 10 of ${formatCount(topN.total)} events with ${f.name}`
                    : `In ${share(f.count)} % of the sample`}
            </span>
          </div>
        </div>
      )}
    </li>
  );
}
