import { type KeyboardEvent, useRef } from 'react';

/**
 * Tabs (the WAI-ARIA tabs pattern, activated on focus): the selected tab is in the Tab
 * order, ArrowLeft/ArrowRight move between tabs (wrapping), Home/End go to the first and
 * last. Each tab controls the panel `search-tab-<id>`.
 */
export function Tabs(props: {
  tabs: ReadonlyArray<readonly [id: string, label: string]>;
  active: string;
  onChange: (id: string) => void;
}) {
  const refs = useRef<(HTMLButtonElement | null)[]>([]);
  const onKey = (e: KeyboardEvent, i: number) => {
    const n = props.tabs.length;
    const to =
      e.key === 'ArrowRight'
        ? (i + 1) % n
        : e.key === 'ArrowLeft'
          ? (i - 1 + n) % n
          : e.key === 'Home'
            ? 0
            : e.key === 'End'
              ? n - 1
              : -1;
    if (to < 0) return;
    e.preventDefault();
    const [id] = props.tabs[to] as readonly [string, string];
    props.onChange(id);
    refs.current[to]?.focus();
  };
  return (
    <div role="tablist" aria-label="Results as" className="search-tabs">
      {props.tabs.map(([id, label], i) => (
        <button
          key={id}
          ref={(el) => {
            refs.current[i] = el;
          }}
          type="button"
          role="tab"
          id={`search-tab-${id}-tab`}
          aria-selected={props.active === id}
          aria-controls={props.active === id ? `search-tab-${id}` : undefined}
          tabIndex={props.active === id ? 0 : -1}
          className={props.active === id ? 'search-tab active' : 'search-tab'}
          onClick={() => props.onChange(id)}
          onKeyDown={(e) => onKey(e, i)}
        >
          {label}
        </button>
      ))}
    </div>
  );
}
