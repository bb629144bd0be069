import { type FormEvent, type RefObject, useEffect, useId, useRef, useState } from 'react';
import { errorText, type GenericQuery, isAbort, runQuery } from '../../api';
import { formatCount } from '../../format';
import { ExplainChanges } from './ExplainChanges';
import {
  BASELINE_CHOICES,
  type Baseline,
  type BaselinePreset,
  baselineBody,
  baselineParam,
  type Change,
  durationText,
  type ExplainResults,
  filterWindow,
  parseBaseline,
  type Span,
  spanText,
} from './explain';
import { parseCustomRange, toRangeTime } from './time-range';
import './explain.css';

type State =
  | { phase: 'running' }
  | { phase: 'done'; results: ExplainResults }
  | { phase: 'failed'; error: string };

/** Runs the Explain query of `query` over `focus` against `baseline` (again when one changes). */
function useExplainQuery(query: string, focus: Span, baseline: Baseline): State {
  const [state, setState] = useState<State>({ phase: 'running' });
  const { from, to } = focus;
  const base = baselineParam(baseline);
  useEffect(() => {
    const ctl = new AbortController();
    setState({ phase: 'running' });
    const params = {
      query,
      time_range: { ts_from: from, ts_to: to },
      // Keyed by the address's text of the baseline (a new object each render is the same one).
      baseline: baselineBody(parseBaseline(base)),
    };
    runQuery<ExplainResults>(
      { type: 'Explain', params },
      {
        signal: ctl.signal,
        onUpdate: (q: GenericQuery<ExplainResults>) => {
          const r = q.results;
          if (q.status === 'ERROR') setState({ phase: 'failed', error: q.error ?? 'Explain failed.' });
          else if (q.status === 'SUCCESS' && r.changes && r.focus && r.baseline)
            setState({ phase: 'done', results: r as ExplainResults });
        },
      },
    ).catch((err) => {
      if (!ctl.signal.aborted && !isAbort(err)) setState({ phase: 'failed', error: errorText(err) });
    });
    return () => ctl.abort();
  }, [query, from, to, base]);
  return state;
}

/** A resolved window of the results as a span of whole seconds. */
const spanOf = (w: { ts_from: number; ts_to: number }): Span => ({
  from: Math.floor(w.ts_from),
  to: Math.ceil(w.ts_to),
});

/** One window: its name, times, length and events. */
function WindowCard(props: { name: string; span: Span | null; total: number | null; className: string }) {
  const { span, total } = props;
  return (
    <div className={`explain-window ${props.className}`}>
      <span className="explain-window-name">{props.name}</span>
      <span className="explain-window-time">{span ? spanText(span) : '…'}</span>
      <span className="muted">
        {span ? durationText(span.to - span.from) : ''}
        {total !== null ? ` · ${formatCount(total)} ${total === 1 ? 'event' : 'events'}` : ''}
      </span>
    </div>
  );
}

/**
 * The baseline control: Previous period, Same time last week, or Custom (From and To, as
 * the time picker takes them, applied with Apply).
 */
function BaselineControl(props: { baseline: Baseline; shown: Span | null; onChange: (b: Baseline) => void }) {
  const { baseline } = props;
  const [choice, setChoice] = useState<BaselinePreset | 'custom'>(
    typeof baseline === 'string' ? baseline : 'custom',
  );
  const start = typeof baseline === 'string' ? props.shown : baseline;
  const [fromText, setFromText] = useState(start ? toRangeTime(start.from) : '');
  const [toText, setToText] = useState(start ? toRangeTime(start.to) : '');
  const [error, setError] = useState<string | null>(null);
  const id = useId();
  const choose = (value: BaselinePreset | 'custom') => {
    setChoice(value);
    setError(null);
    if (value !== 'custom') props.onChange(value);
    else if (props.shown && !fromText) {
      setFromText(toRangeTime(props.shown.from));
      setToText(toRangeTime(props.shown.to));
    }
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseCustomRange(fromText, toText);
    if (!parsed.ok) return setError(parsed.error);
    setError(null);
    props.onChange({ from: parsed.range.from, to: parsed.range.to });
  };
  return (
    <div className="explain-baseline">
      <label htmlFor={`${id}-baseline`}>Baseline</label>
      <select
        id={`${id}-baseline`}
        value={choice}
        onChange={(e) => choose(e.target.value as BaselinePreset | 'custom')}
      >
        {BASELINE_CHOICES.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
      {choice === 'custom' && (
        <form className="explain-custom" onSubmit={apply} aria-label="Custom baseline">
          <label htmlFor={`${id}-from`}>From</label>
          <input
            id={`${id}-from`}
            className="mono"
            value={fromText}
            placeholder="YYYY-MM-DD HH:mm:ss"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
            onChange={(e) => setFromText(e.target.value)}
          />
          <label htmlFor={`${id}-to`}>To</label>
          <input
            id={`${id}-to`}
            className="mono"
            value={toText}
            placeholder="YYYY-MM-DD HH:mm:ss"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? `${id}-error` : undefined}
            onChange={(e) => setToText(e.target.value)}
          />
          <button type="submit" className="small">
            Apply
          </button>
          {error && (
            <span id={`${id}-error`} role="alert" className="field-error">
              {error}
            </span>
          )}
        </form>
      )}
    </div>
  );
}

/**
 * The Explain panel (region "Explain", docs/web-ui.md): which kinds of message and which
 * field values account for the difference between the focus window and a baseline, for
 * the search's query (docs/api/explain.md). The focus and baseline come from the address.
 */
export function ExplainPanel(props: {
  query: string;
  focus: Span;
  baseline: Baseline;
  onBaseline: (b: Baseline) => void;
  /** Searches for a change (a gone one over its baseline window, `window`). */
  onFilter: (term: string, window: Span | null) => void;
  onExclude: (term: string) => void;
  onClose: () => void;
  /** True when the Explain button opened it: the panel takes the focus (once). */
  takeFocus: RefObject<boolean>;
}) {
  const { focus, baseline, takeFocus } = props;
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!takeFocus.current) return;
    takeFocus.current = false;
    ref.current?.focus();
  }, [takeFocus]);
  const state = useExplainQuery(props.query, focus, baseline);
  const results = state.phase === 'done' ? state.results : null;
  const shownBaseline = results ? spanOf(results.baseline) : typeof baseline === 'string' ? null : baseline;
  const filterIn = (c: Change) => props.onFilter(c.term, results ? filterWindow(c, results) : null);
  return (
    <section ref={ref} tabIndex={-1} aria-label="Explain" className="explain-panel">
      <header className="explain-head">
        <h2>What changed</h2>
        <span className="muted small-text">
          {props.query.trim() ? (
            <>
              in <code>{props.query}</code>
            </>
          ) : (
            'in every event'
          )}
        </span>
        <button type="button" className="secondary small explain-close" onClick={props.onClose}>
          Close
        </button>
      </header>
      <div className="explain-windows">
        <WindowCard
          name="Focus"
          span={focus}
          total={results?.focus_total ?? null}
          className="explain-window-focus"
        />
        <span className="explain-vs muted" aria-hidden="true">
          vs
        </span>
        <WindowCard
          name="Baseline"
          span={shownBaseline}
          total={results?.baseline_total ?? null}
          className="explain-window-baseline"
        />
        <BaselineControl
          key={baselineParam(baseline)}
          baseline={baseline}
          shown={shownBaseline}
          onChange={props.onBaseline}
        />
      </div>
      {state.phase === 'failed' ? (
        <p role="alert" className="error">
          {state.error}
        </p>
      ) : !results ? (
        <p role="status" className="muted explain-running">
          Comparing the windows…
        </p>
      ) : results.changes.length === 0 ? (
        <p role="status" className="explain-none">
          No significant change
          <span className="muted">
            {' '}
            among {formatCount(results.tested)} patterns and field values (score below{' '}
            {formatCount(results.min_score)}).
          </span>
        </p>
      ) : (
        <>
          <ExplainChanges
            changes={results.changes}
            onFilter={filterIn}
            onExclude={(c) => props.onExclude(c.term)}
          />
          <p className="muted small-text explain-foot">
            {formatCount(results.changes.length)} of {formatCount(results.tested)} patterns and values of{' '}
            {results.fields.length ? results.fields.join(', ') : 'no field'} scored{' '}
            {formatCount(results.min_score)} or more (a G-test of the two rates). Click a change to search for
            it.
          </p>
        </>
      )}
    </section>
  );
}
