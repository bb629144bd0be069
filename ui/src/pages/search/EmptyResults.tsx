import { useEffect, useState } from 'react';
import { isFinal, runQuery, type SearchResults, stopQuery, type TimeRange } from '../../api';
import { formatCount } from '../../format';
import { type FieldFix, fixFields, rangeName, widerRanges } from './empty-hints';
import type { FieldInfo } from './FieldList';
import type { RangeSel, Window } from './time-range';
import './query-help.css';

/** How many wider ranges are counted, one after another while each holds nothing. */
const WIDER_TRIES = 3;

const timeRangeOf = (r: RangeSel): TimeRange =>
  r.kind === 'absolute' ? { ts_from: r.from, ts_to: r.to } : { preset: r.preset };

/**
 * Counts the events `query` matches over `range` (a Search of one row); null when the count
 * failed. A query still running on the server when `signal` aborts is stopped there.
 */
async function countEvents(query: string, range: TimeRange, signal: AbortSignal): Promise<number | null> {
  let qid: string | null = null;
  let done = false;
  const stop = () => {
    if (qid && !done) stopQuery(qid).catch(() => {});
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    const q = await runQuery<SearchResults>(
      { type: 'Search', params: { query, time_range: range, page_size: 1 } },
      {
        signal,
        onUpdate: (u) => {
          qid = u.query_id;
          done = isFinal(u.status);
        },
      },
    );
    return q.status === 'SUCCESS' ? (q.results.total ?? null) : null;
  } catch {
    return null;
  } finally {
    done = true;
    signal.removeEventListener('abort', stop);
  }
}

const events = (n: number) => `${formatCount(n)} ${n === 1 ? 'event' : 'events'}`;

/** A wider range and what it holds: null while counting, NaN when the count failed. */
interface Offer {
  range: RangeSel;
  count: number | null;
}

/**
 * Said in the results when a search matched nothing: so, and what may find something. A
 * wider range (the next larger preset, or the window zoomed out), with how many events it
 * holds; while it holds none either the next is counted, up to WIDER_TRIES. A field the
 * query names that no event of the range has, with a field that is there and has a close
 * name, as a one-click fix (with its count over the same range).
 */
export function EmptyResults(props: {
  query: string;
  range: RangeSel;
  window: Window;
  /** The fields of the range (the query box's completion list: every event, not only matches). */
  fields: () => Promise<FieldInfo[]>;
  /** Searches `query` (over the range given). */
  onSearch: (query: string, patch?: { range: RangeSel }) => void;
  /** Puts `query` in the query box (before it is searched). */
  onText: (query: string) => void;
}) {
  const { query, range, window, fields } = props;
  const search = (q: string, r?: RangeSel) => {
    props.onText(q);
    props.onSearch(q, r && { range: r });
  };
  const [offers, setOffers] = useState<Offer[]>([]);
  const [fix, setFix] = useState<(FieldFix & { count: number | null }) | null>(null);
  const rangeKey = JSON.stringify(range);
  const { ts_from, ts_to } = window;

  useEffect(() => {
    const ctl = new AbortController();
    const candidates = widerRanges(JSON.parse(rangeKey) as RangeSel, { ts_from, ts_to }, Date.now());
    setOffers([]);
    (async () => {
      for (const candidate of candidates.slice(0, WIDER_TRIES)) {
        setOffers((o) => [...o, { range: candidate, count: null }]);
        const n = await countEvents(query, timeRangeOf(candidate), ctl.signal);
        if (ctl.signal.aborted) return;
        setOffers((o) => o.map((x) => (x.range === candidate ? { ...x, count: n ?? Number.NaN } : x)));
        if (n !== 0) return;
      }
    })();
    return () => ctl.abort();
  }, [query, rangeKey, ts_from, ts_to]);

  useEffect(() => {
    const ctl = new AbortController();
    setFix(null);
    fields()
      .then(async (list) => {
        const found = fixFields(query, list);
        if (!found || ctl.signal.aborted) return;
        setFix({ ...found, count: null });
        const n = await countEvents(found.query, { ts_from, ts_to }, ctl.signal);
        if (!ctl.signal.aborted) setFix({ ...found, count: n ?? Number.NaN });
      })
      .catch(() => {
        // No fields, no fix to offer.
      });
    return () => ctl.abort();
  }, [query, fields, ts_from, ts_to]);

  const current = offers.at(-1);
  const noneWider = offers.length > 0 && offers.every((o) => o.count === 0);
  return (
    <div className="empty-results">
      <p className="empty-results-title">
        {query.trim() === '' ? (
          'No events in this time range.'
        ) : (
          <>
            No events match <code className="empty-results-query">{query}</code> in this time range.
          </>
        )}
      </p>
      <ul className="empty-results-offers">
        {fix && (
          <li>
            <span>
              {fix.fixes.map((f, i) => (
                <span key={f.from}>
                  {i > 0 && ' '}
                  No event in this range has the field <code>{f.from}</code>; did you mean <code>{f.to}</code>
                  ?
                </span>
              ))}
            </span>
            <span className="empty-results-action">
              <button type="button" className="secondary small" onClick={() => search(fix.query)}>
                {fix.fixes.length === 1
                  ? `Use ${fix.fixes[0]?.to} instead`
                  : `Use ${fix.fixes.map((f) => f.to).join(', ')} instead`}
              </button>
              <OfferCount count={fix.count} />
            </span>
          </li>
        )}
        {current && !noneWider && current.count !== 0 && (
          <li>
            <span>Try a wider range:</span>
            <span className="empty-results-action">
              <button type="button" className="secondary small" onClick={() => search(query, current.range)}>
                Search {rangeName(current.range)}
              </button>
              <OfferCount count={current.count} />
            </span>
          </li>
        )}
        {noneWider && current && (
          <li className="muted">No events match in {rangeName(current.range)} either.</li>
        )}
      </ul>
    </div>
  );
}

function OfferCount({ count }: { count: number | null }) {
  if (count === null) return <span className="muted">counting…</span>;
  if (Number.isNaN(count)) return null;
  return <span className="muted">{events(count)}</span>;
}
