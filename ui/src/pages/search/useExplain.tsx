import { type ReactNode, useCallback, useRef, useState } from 'react';
import { ExplainPanel } from './ExplainPanel';
import type { Span } from './explain';
import type { SearchView } from './search-url';
import type { Window } from './time-range';
import type { SearchAddress } from './useSearchAddress';

/** What the timeline takes for the selection and Explain (Timeline's props of those names). */
export interface ExplainTimeline {
  selection: Span | null;
  onSelect: (span: Span | null) => void;
  explained: Span | null;
  onExplain: () => void;
}

/**
 * The search page's "What changed": the span dragged across the timeline (kept while the
 * window it was picked in is shown), the Explain button (the selection, else the window
 * shown) and the panel the address opens (`explain=`, `baseline=`), whose changes filter
 * the search in or out.
 */
export function useExplain(opts: {
  view: SearchView;
  /** The window the results are of. */
  window: Window | null;
  update: SearchAddress['update'];
  /** Adds a term to the query and searches, with more of the view changed. */
  onFilter: (term: string, patch?: Partial<SearchView>) => void;
  /** The panel can show (not while Live, not for a query with pipes). */
  enabled: boolean;
}): { timeline: ExplainTimeline; panel: ReactNode } {
  const { view, window: w, update, onFilter } = opts;
  const shownKey = w ? `${w.ts_from}-${w.ts_to}` : '';
  const [picked, setPicked] = useState<{ span: Span; key: string } | null>(null);
  const selection = picked && picked.key === shownKey ? picked.span : null;
  /** The panel was opened by the button (it takes the focus), not by the address. */
  const opened = useRef(false);

  const onSelect = useCallback((span: Span | null) => setPicked(span && { span, key: shownKey }), [shownKey]);
  const onExplain = useCallback(() => {
    const focus = selection ?? (w && { from: Math.floor(w.ts_from), to: Math.ceil(w.ts_to) });
    if (!focus) return;
    opened.current = true;
    update({ explain: focus, baseline: view.baseline ?? 'previous' }, { push: true });
    setPicked(null);
  }, [selection, w, update, view.baseline]);

  const focus = view.explain ?? null;
  const panel =
    opts.enabled && focus ? (
      <ExplainPanel
        key={`${focus.from}-${focus.to}`}
        query={view.query}
        focus={focus}
        baseline={view.baseline ?? 'previous'}
        takeFocus={opened}
        onBaseline={(baseline) => update({ baseline }, { push: true })}
        onFilter={(term, gone) =>
          onFilter(term, { explain: null, ...(gone ? { range: { kind: 'absolute', ...gone } } : {}) })
        }
        onExclude={(term) => onFilter(`-${term}`)}
        onClose={() => update({ explain: null }, { push: true })}
      />
    ) : null;
  return { timeline: { selection, onSelect, explained: opts.enabled ? focus : null, onExplain }, panel };
}
