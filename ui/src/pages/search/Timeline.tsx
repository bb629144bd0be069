import {
  type FocusEvent,
  type KeyboardEvent,
  memo,
  type PointerEvent,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { formatCount, formatTs } from '../../format';
import { type Span, spanText } from './explain';
import { intervalSeconds, type RangeSel } from './time-range';
import { Bars, barText, type Frame, Legend, SelectionBar, Tooltip, xOf } from './timeline-parts';
import {
  type Bar,
  barSeconds,
  compact,
  countTicks,
  intervalName,
  rebucket,
  seriesOrder,
  type TimelineData,
  timeTicks,
} from './timeline-scale';
import './timeline.css';

const HEIGHT = 80;
/** The width drawn before the chart is measured (the first frame only). */
const UNMEASURED = 1000;
/** A pointer that moved less than this between press and release clicked. */
const CLICK_PX = 3;

const short = (seconds: number) => formatTs(seconds).slice(0, 16);
type Zoom = RangeSel & { kind: 'absolute' };

/**
 * The search's events over its window as a histogram: bars as wide as the chart allows
 * (MIN_BAR_PX each at least, summed from the server's finer buckets), stacked by severity
 * once the split has come, with count and time axes, a tooltip for the bar under the
 * pointer, and a legend. Clicking a bar zooms to it; dragging across bars (a pointer or a
 * finger) selects the span, which "Zoom in" zooms to and "Explain" explains (with no
 * selection, the whole range); "Zoom out" doubles the range. The window explained shows as
 * a band. From the keyboard the chart is a slider over the bars: arrows move between them
 * (the tooltip follows), Enter zooms to the one shown, Escape clears the selection.
 */
export const Timeline = memo(function Timeline(props: {
  timeline: TimelineData | null;
  window: { ts_from: number; ts_to: number } | null;
  onZoom?: (range: Zoom) => void;
  onZoomOut?: () => void;
  /** The span dragged across (drawn with its Zoom in and Clear); null: none. */
  selection?: Span | null;
  /** A drag ended over a span (null: the selection cleared). Without it a drag zooms. */
  onSelect?: (span: Span | null) => void;
  /** The window the Explain panel explains, drawn as a band. */
  explained?: Span | null;
  /** The Explain button: the selection, else the range. */
  onExplain?: () => void;
}) {
  const { timeline, window: w, onZoom, onZoomOut, selection: picked, onSelect, explained, onExplain } = props;
  const plotRef = useRef<HTMLDivElement>(null);
  const [measured, setMeasured] = useState(0);
  useLayoutEffect(() => {
    const el = plotRef.current;
    if (!el) return;
    setMeasured(Math.round(el.getBoundingClientRect().width));
    const ro = new ResizeObserver(([entry]) => {
      if (entry) setMeasured(Math.round(entry.contentRect.width));
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const width = measured || UNMEASURED;

  const from = w?.ts_from ?? 0;
  const to = w?.ts_to ?? 0;
  const serverS = timeline ? intervalSeconds(timeline.interval) : null;
  const barS = serverS && to > from ? barSeconds(to - from, width, serverS) : null;
  const bars = useMemo(() => (timeline && w && barS ? rebucket(timeline, w, barS) : []), [timeline, w, barS]);
  const { names, totals, max, sum } = useMemo(() => {
    const totals: Record<string, number> = {};
    for (const b of bars)
      for (const [k, v] of Object.entries(b.series ?? {})) totals[k] = (totals[k] ?? 0) + v;
    const names = seriesOrder(Object.keys(totals)).filter((n) => (totals[n] ?? 0) > 0);
    return {
      // Events none of which has a severity are not split (one colour, no legend).
      names: names.length === 1 && names[0] === 'other' ? [] : names,
      totals,
      max: bars.reduce((m, b) => Math.max(m, b.count), 0),
      sum: bars.reduce((m, b) => m + b.count, 0),
    };
  }, [bars]);
  const yTicks = countTicks(max, 3);
  const frame: Frame = { width, height: HEIGHT, from, to, top: yTicks[yTicks.length - 1] ?? 1 };
  const xTicks = useMemo(() => timeTicks(from, to, width), [from, to, width]);
  const canZoom = Boolean(onZoom && w && bars.length > 0);

  const split =
    names.length > 0 ? `; ${names.map((n) => `${n} ${formatCount(totals[n] ?? 0)}`).join(', ')}` : '';
  const label =
    timeline && barS
      ? `Events per ${intervalName(barS)}: ${formatCount(sum)} in all, at most ${formatCount(max)} in one bar${split}`
      : 'Timeline loading';

  const [hover, setHover] = useState<number | null>(null);
  /**
   * The bar the keyboard is on, by its start in the window it was chosen in (the split's
   * bars replacing the plain ones keep it); until one is chosen, the last with events.
   */
  const [focus, setFocus] = useState<{ from: number; to: number; start: number } | null>(null);
  /** The keyboard's bar shows its tooltip (since the chart was tabbed to or an arrow pressed). */
  const [keyboard, setKeyboard] = useState(false);
  const lastWithEvents = bars.reduce((last, b, i) => (b.count > 0 ? i : last), bars.length - 1);
  const chosen =
    focus && focus.from === from && focus.to === to ? bars.findIndex((b) => b.start === focus.start) : -1;
  const current = chosen >= 0 ? chosen : lastWithEvents;
  const currentBar = bars[current];

  /** The drag in fractions of the chart's width, while one is under way. */
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  const dragRef = useRef<{ a: number; b: number; id: number } | null>(null);
  /** Where the pointer is, from 0 (the chart's left) to 1, and how many pixels make 1. */
  const at = (e: PointerEvent<SVGSVGElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const f = r.width > 0 ? (e.clientX - r.left) / r.width : 0;
    return { f: Math.min(1, Math.max(0, f)), px: r.width };
  };
  const timeAt = (f: number) => from + f * (to - from);
  const barAt = (t: number) => {
    const i = bars.findIndex((b) => t < b.end);
    return i < 0 ? bars.length - 1 : i;
  };
  const zoomTo = (bar: Bar | undefined) => {
    if (bar && onZoom) onZoom({ kind: 'absolute', from: Math.floor(bar.start), to: Math.ceil(bar.end) });
  };

  const onPointerDown = (e: PointerEvent<SVGSVGElement>) => {
    if (!canZoom || e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    const { f } = at(e);
    dragRef.current = { a: f, b: f, id: e.pointerId };
    setDrag({ a: f, b: f });
    setHover(null);
  };
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    const d = dragRef.current;
    const { f } = at(e);
    if (!d) {
      if (e.pointerType !== 'touch' && bars.length > 0) setHover(barAt(timeAt(f)));
      setKeyboard(false);
      return;
    }
    if (d.id !== e.pointerId) return;
    d.b = f;
    setDrag({ a: d.a, b: d.b });
  };
  const end = (e: PointerEvent<SVGSVGElement>, apply: boolean) => {
    const d = dragRef.current;
    if (!d || d.id !== e.pointerId) return;
    dragRef.current = null;
    setDrag(null);
    const { f, px } = at(e);
    if (!apply || !onZoom) return;
    if (Math.abs(f - d.a) * px < CLICK_PX) return zoomTo(bars[barAt(timeAt(d.a))]);
    const a = Math.floor(timeAt(Math.min(d.a, f)));
    const b = Math.ceil(timeAt(Math.max(d.a, f)));
    if (b - a < 1) return;
    if (onSelect) onSelect({ from: a, to: b });
    else onZoom({ kind: 'absolute', from: a, to: b });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (bars.length === 0) return;
    const last = bars.length - 1;
    const moves: Record<string, number> = {
      ArrowLeft: Math.max(0, current - 1),
      ArrowRight: Math.min(last, current + 1),
      Home: 0,
      End: last,
    };
    const next = moves[e.key];
    const bar = next === undefined ? undefined : bars[next];
    if (bar) {
      e.preventDefault();
      setFocus({ from, to, start: bar.start });
      setKeyboard(true);
      setHover(null);
    } else if (e.key === 'Enter' && canZoom) {
      e.preventDefault();
      zoomTo(currentBar);
    } else if (e.key === 'Escape' && (keyboard || picked)) {
      e.preventDefault();
      setKeyboard(false);
      onSelect?.(null);
    }
  };
  // Tabbed to (not clicked): the tooltip shows the bar the arrows start from.
  const onFocus = (e: FocusEvent<HTMLDivElement>) => setKeyboard(e.currentTarget.matches(':focus-visible'));

  const shown = drag ? null : hover !== null ? bars[hover] : keyboard ? currentBar : undefined;
  const hint = useId();
  const selection = drag && Math.abs(drag.b - drag.a) * width >= CLICK_PX ? drag : null;
  const axisEdge = (x: number) => (x < 24 ? 'start' : x > width - 24 ? 'end' : 'middle');
  /** A span's place on the chart (clipped to it), or null when it is outside. */
  const band = (s: Span | null | undefined) => {
    if (!s || !w || s.to <= from || s.from >= to) return null;
    const x0 = xOf(frame, Math.max(from, s.from));
    return { x: x0, width: Math.max(2, xOf(frame, Math.min(to, s.to)) - x0) };
  };
  const kept = drag ? null : band(picked);
  const explainedBand = band(explained);

  return (
    <section aria-label="Timeline" className="timeline histogram">
      <div className="timeline-yaxis muted" aria-hidden="true">
        {max > 0 &&
          yTicks.map((v) => (
            <span key={v} style={{ bottom: `${(v / frame.top) * 100}%` }}>
              {compact(v)}
            </span>
          ))}
      </div>
      <div className="timeline-plot" ref={plotRef}>
        <div
          className="timeline-slider"
          role="slider"
          tabIndex={0}
          aria-label={label}
          aria-describedby={hint}
          aria-valuemin={bars.length > 0 ? 1 : 0}
          aria-valuemax={bars.length}
          aria-valuenow={bars.length > 0 ? current + 1 : 0}
          aria-valuetext={currentBar ? barText(currentBar, names) : timeline ? 'No events' : 'Loading'}
          onKeyDown={onKeyDown}
          onFocus={onFocus}
          onBlur={() => setKeyboard(false)}
        >
          <svg
            className={canZoom ? 'timeline-chart zoomable' : 'timeline-chart'}
            viewBox={`0 0 ${width} ${HEIGHT}`}
            preserveAspectRatio="none"
            aria-hidden="true"
            onPointerDown={onPointerDown}
            onPointerMove={onPointerMove}
            onPointerUp={(e) => end(e, true)}
            onPointerCancel={(e) => end(e, false)}
            onPointerLeave={() => setHover(null)}
          >
            {yTicks.slice(1).map((v) => (
              <line
                key={v}
                x1={0}
                x2={width}
                y1={HEIGHT - (v / frame.top) * HEIGHT}
                y2={HEIGHT - (v / frame.top) * HEIGHT}
                className="timeline-grid"
              />
            ))}
            {xTicks.map((t) => (
              <line
                key={t.ts}
                x1={xOf(frame, t.ts)}
                x2={xOf(frame, t.ts)}
                y1={0}
                y2={HEIGHT}
                className={t.major ? 'timeline-grid major' : 'timeline-grid'}
              />
            ))}
            {shown && (
              <rect
                x={xOf(frame, shown.start)}
                width={xOf(frame, shown.end) - xOf(frame, shown.start)}
                y={0}
                height={HEIGHT}
                className="timeline-active"
              />
            )}
            {explainedBand && (
              <rect {...explainedBand} y={0} height={HEIGHT} className="timeline-explained" />
            )}
            {max > 0 && <Bars bars={bars} names={names} frame={frame} />}
            <line x1={0} x2={width} y1={HEIGHT} y2={HEIGHT} className="timeline-baseline" />
            {selection && (
              <rect
                x={Math.min(selection.a, selection.b) * width}
                width={Math.abs(selection.b - selection.a) * width}
                y={0}
                height={HEIGHT}
                className="timeline-selection"
                vectorEffect="non-scaling-stroke"
              />
            )}
            {kept && (
              <rect
                {...kept}
                y={0}
                height={HEIGHT}
                className="timeline-selection kept"
                vectorEffect="non-scaling-stroke"
              />
            )}
          </svg>
        </div>
        {shown && <Tooltip bar={shown} names={names} frame={frame} />}
        {kept && picked && (
          <SelectionBar
            text={spanText(picked)}
            center={(kept.x + kept.width / 2) / width}
            onZoom={onZoom && (() => onZoom({ kind: 'absolute', ...picked }))}
            onClear={() => onSelect?.(null)}
          />
        )}
        <span id={hint} className="visually-hidden">
          Left and right arrows move between the bars, Enter zooms to the bar; a click on a bar zooms too, a
          drag across bars selects them for Explain or Zoom in.
        </span>
      </div>
      <div className="timeline-ticks muted" aria-hidden="true">
        {xTicks.map((t) => {
          const x = xOf(frame, t.ts);
          return (
            <span
              key={t.ts}
              className={`${axisEdge(x)}${t.major ? ' major' : ''}`}
              style={{ left: `${(x / width) * 100}%` }}
            >
              {t.label}
            </span>
          );
        })}
      </div>
      <div className="timeline-axis-labels muted">
        <span aria-hidden="true">{from ? short(from) : ''}</span>
        <span className="timeline-middle">
          <span aria-hidden="true">{barS ? `per ${intervalName(barS)}` : ''}</span>
          <Legend names={names} totals={totals} />
          {onZoomOut && w && (
            <button type="button" className="secondary small" onClick={onZoomOut}>
              Zoom out
            </button>
          )}
          {onExplain && w && (
            <button
              type="button"
              className={picked ? 'small explain-button' : 'secondary small explain-button'}
              title={
                picked
                  ? `What changed in ${spanText(picked)}`
                  : 'What changed in this range, against the one before'
              }
              onClick={onExplain}
            >
              Explain
            </button>
          )}
        </span>
        <span aria-hidden="true">{to ? short(to) : ''}</span>
      </div>
    </section>
  );
});
