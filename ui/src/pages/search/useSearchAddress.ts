import { useCallback, useEffect, useMemo, useRef } from 'react';
import { navigate, useLocation } from '../../router';
import { type ColumnWidths, DEFAULT_COLUMNS, loadColumns, loadWidths } from './columns';
import { type SearchView, viewFromParams, viewPath, withShownColumns } from './search-url';

/** The page's state as the address holds it, and the columns it shows. */
export interface SearchAddress {
  /** What the address holds; `columns` null while the default ones are shown. */
  view: SearchView;
  /** The columns shown: the address's, else the reader's own (kept in their browser). */
  columns: string[];
  /** The widths of the columns resized: the address's, else the reader's own. */
  widths: ColumnWidths;
  /**
   * Changes parts of the page's state by changing the address: a history entry when
   * `push` (a new search or range, so Back shows the one before), else a replacement.
   * `columns: null` keeps the columns shown.
   */
  update: (patch: Partial<SearchView>, opts?: { push?: boolean }) => void;
}

type Shown = ReturnType<typeof withShownColumns>;

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * What an address shows. Parts equal to `before`'s keep their identity: the time picker,
 * say, takes a new range object for a range applied from elsewhere.
 */
function read(params: URLSearchParams, before: Shown | null): Shown {
  const next = withShownColumns(viewFromParams(params), loadColumns(), DEFAULT_COLUMNS);
  if (!before) return next;
  if (same(next.view, before.view)) return before;
  if (same(next.columns, before.columns)) next.columns = before.columns;
  if (same(next.view.range, before.view.range)) next.view.range = before.view.range;
  if (same(next.view.sort, before.view.sort)) next.view.sort = before.view.sort;
  return next;
}

const onSearchPage = () => window.location.pathname === '/search';

/**
 * The search page's state in its address (search-url.ts): the query searched, range,
 * columns, sort, tab, open event and its context, and saved search are read from the
 * address on every render and changed only by changing it, so a reload, a link and
 * Back/Forward show what the address says. The page keeps no copy.
 *
 * `onVisit` is told when the address changes other than through `update` (Back, Forward,
 * a link to /search followed from the page): the page then shows that view (its query in
 * the box, its search run). The address is kept in its canonical form (defaults left out,
 * the reader's own columns written in when they are not the default), as a replacement.
 */
export function useSearchAddress(onVisit: (view: SearchView) => void): SearchAddress {
  const { href } = useLocation();
  const last = useRef<Shown | null>(null);
  const { view, columns } = useMemo(() => {
    last.current = read(new URL(href, window.location.origin).searchParams, last.current);
    return last.current;
  }, [href]);
  const widths = useMemo(() => view.widths ?? loadWidths(), [view.widths]);
  const path = viewPath(view);
  /** The address the page last wrote or showed: any other is a visit from outside. */
  const known = useRef(href);
  const visit = useRef(onVisit);
  visit.current = onVisit;

  useEffect(() => {
    if (!onSearchPage()) return;
    if (href !== known.current) visit.current(view);
    known.current = path;
    if (href !== path) navigate(path, { replace: true });
  }, [href, path, view]);

  const update = useCallback((patch: Partial<SearchView>, opts: { push?: boolean } = {}) => {
    if (!onSearchPage()) return;
    // From the address as it is now, so that two updates in one event both count.
    const own = loadColumns();
    const now = withShownColumns(
      viewFromParams(new URLSearchParams(window.location.search)),
      own,
      DEFAULT_COLUMNS,
    );
    const next = { ...now.view, ...patch, columns: patch.columns ?? now.columns };
    const to = viewPath(withShownColumns(next, own, DEFAULT_COLUMNS).view);
    known.current = to;
    navigate(to, { replace: !opts.push });
  }, []);

  return { view, columns, widths, update };
}
