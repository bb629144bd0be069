import { type KeyboardEvent, memo, useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { type Answer, ApiError, api, errorText, isAbort, type TimeRange } from '../../api';
import { formatCount } from '../../format';
import { toggleColumn } from './columns';
import { FieldItem } from './FieldItem';
import './field-list.css';

export type FieldsResponse = Answer<'/api/fields'>;
export type FieldInfo = FieldsResponse['fields'][number];

/** `GET /api/fields` for a query over a time range. */
export const fetchFields = (query: string, timeRange: TimeRange, signal?: AbortSignal) =>
  api<FieldsResponse>(
    `/api/fields?${new URLSearchParams({ query, time_range: JSON.stringify(timeRange) })}`,
    { signal },
  );

/** The results table's column of a field: the time's is `time`, every other field's its name. */
const columnOf = (field: string) => (field === 'ts' ? 'time' : field);

/**
 * The fields of the events a search matched (`GET /api/fields`, from the newest 10,000),
 * each with its type mark and count, a box that narrows them by name, and a toggle that
 * shows one as a column of the results; a field opens to its top values (FieldItem.tsx).
 * Keys: ↓ from the box to the first field, ↑ and ↓ between fields, Escape empties the box.
 */
export const FieldList = memo(function FieldList(props: {
  query: string;
  timeRange: TimeRange | null;
  onFilter: (term: string) => void;
  /** The results table's columns, and how to change them; without them no toggles. */
  columns?: readonly string[];
  onColumns?: (cols: string[]) => void;
}) {
  const { query, timeRange, onFilter, columns, onColumns } = props;
  const headingId = useId();
  const listId = useId();
  const list = useRef<HTMLUListElement>(null);
  const box = useRef<HTMLInputElement>(null);
  // Open beside the results on wide screens, folded above them on phones.
  const [open, setOpen] = useState(() => !window.matchMedia?.('(max-width: 720px)').matches);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [find, setFind] = useState('');
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

  const toggle = useCallback(
    (name: string) =>
      setExpanded((prev) => {
        const next = new Set(prev);
        if (!next.delete(name)) next.add(name);
        return next;
      }),
    [],
  );

  const needle = find.trim().toLowerCase();
  const shown = useMemo(
    () => (data && needle ? data.fields.filter((f) => f.name.toLowerCase().includes(needle)) : data?.fields),
    [data, needle],
  );

  const onColumn = (name: string, on: boolean) => {
    if (columns && onColumns) onColumns(toggleColumn(columns, columnOf(name), on));
  };

  /** ↑ and ↓ between the fields' names; ↑ from the first back to the box. */
  const moveFocus = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp') return;
    const names = [...(list.current?.querySelectorAll<HTMLButtonElement>('button.field-name') ?? [])];
    const at = names.indexOf(e.target as HTMLButtonElement);
    const next = e.key === 'ArrowDown' ? names[at + 1] : at > 0 ? names[at - 1] : box.current;
    if (!next) return;
    e.preventDefault();
    next.focus();
  };

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
          <>
            <div className="field-find">
              <input
                ref={box}
                type="search"
                aria-label="Find a field"
                placeholder="Find a field"
                value={find}
                onChange={(e) => setFind(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Escape' && find !== '') {
                    e.preventDefault();
                    setFind('');
                  } else if (e.key === 'ArrowDown') moveFocus(e);
                }}
              />
            </div>
            {shown && shown.length === 0 && (
              <p className="muted small-text" role="status">
                No field’s name holds “{find.trim()}”.
              </p>
            )}
            <ul className="field-list" ref={list}>
              {shown?.map((f) => {
                const column = columns?.includes(columnOf(f.name));
                return (
                  <FieldItem
                    key={f.name}
                    field={f}
                    events={data.events}
                    expanded={expanded.has(f.name)}
                    onToggle={toggle}
                    onFilter={onFilter}
                    column={columns && onColumns ? column === true : undefined}
                    lastColumn={columns?.length === 1}
                    onColumn={onColumn}
                    onKeyDown={moveFocus}
                    query={query}
                    timeRange={timeRange}
                  />
                );
              })}
            </ul>
          </>
        )}
      </div>
    </section>
  );
});
