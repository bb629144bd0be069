import { memo, type PointerEvent, useRef, useState } from 'react';
import type { TimelineResults } from '../../api';
import { formatCount, formatTs } from '../../format';
import { intervalSeconds, type RangeSel, zoomRange } from './time-range';

const HEIGHT = 100;

const short = (seconds: number) => formatTs(seconds).slice(0, 16);

/**
 * Event counts per bucket as SVG bars, drawn over the search's window. Dragging across
 * the bars selects a span and zooms to it; "Zoom out" doubles the range.
 */
export const Timeline = memo(function Timeline(props: {
  timeline: TimelineResults | null;
  window: { ts_from: number; ts_to: number } | null;
  onZoom?: (range: RangeSel & { kind: 'absolute' }) => void;
  onZoomOut?: () => void;
}) {
  const { timeline, window: w, onZoom, onZoomOut } = props;
  const buckets = timeline?.buckets ?? [];
  const max = buckets.reduce((m, b) => Math.max(m, b.count), 0);
  const sum = buckets.reduce((m, b) => m + b.count, 0);
  const n = Math.max(buckets.length, 1);
  const gap = n <= 120 ? 0.15 : 0;
  const from = w?.ts_from ?? buckets[0]?.ts ?? 0;
  const to = w?.ts_to ?? 0;
  const label = timeline
    ? `Events per ${timeline.interval}: ${formatCount(sum)} in all, at most ${formatCount(max)} in one bucket`
    : 'Timeline loading';
  const interval = timeline ? intervalSeconds(timeline.interval) : null;
  const canZoom = Boolean(onZoom && w && interval && buckets.length > 0);

  /** The drag in bucket positions (0..n), while one is under way. */
  const [drag, setDrag] = useState<{ a: number; b: number } | null>(null);
  const dragRef = useRef<{ a: number; b: number; id: number } | null>(null);
  const at = (e: PointerEvent<SVGSVGElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    return r.width > 0 ? Math.min(n, Math.max(0, ((e.clientX - r.left) / r.width) * n)) : 0;
  };
  const onPointerDown = (e: PointerEvent<SVGSVGElement>) => {
    if (!canZoom || e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    const x = at(e);
    dragRef.current = { a: x, b: x, id: e.pointerId };
    setDrag({ a: x, b: x });
  };
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    const d = dragRef.current;
    if (!d || d.id !== e.pointerId) return;
    d.b = at(e);
    setDrag({ a: d.a, b: d.b });
  };
  const end = (e: PointerEvent<SVGSVGElement>, apply: boolean) => {
    const d = dragRef.current;
    if (!d || d.id !== e.pointerId) return;
    dragRef.current = null;
    setDrag(null);
    d.b = at(e);
    // Less than a fifth of a bucket is a click, not a span.
    if (!apply || !w || !interval || !onZoom || Math.abs(d.b - d.a) < 0.2) return;
    const range = zoomRange(buckets, interval, d.a, d.b, w);
    if (range) onZoom(range);
  };

  return (
    <section aria-label="Timeline" className="timeline">
      <div className="timeline-max muted" aria-hidden="true">
        {timeline ? formatCount(max) : ''}
      </div>
      <svg
        className={canZoom ? 'timeline-chart zoomable' : 'timeline-chart'}
        viewBox={`0 0 ${n} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={label}
        onPointerDown={onPointerDown}
        onPointerMove={onPointerMove}
        onPointerUp={(e) => end(e, true)}
        onPointerCancel={(e) => end(e, false)}
      >
        {canZoom && <title>Drag across the bars to zoom in</title>}
        <line
          x1={0}
          x2={n}
          y1={HEIGHT}
          y2={HEIGHT}
          className="timeline-axis"
          vectorEffect="non-scaling-stroke"
        />
        {max > 0 &&
          buckets.map((b, i) =>
            b.count > 0 ? (
              <rect
                key={b.ts}
                x={i + gap / 2}
                width={1 - gap}
                y={HEIGHT - (b.count / max) * HEIGHT}
                height={(b.count / max) * HEIGHT}
                className="timeline-bar"
              >
                <title>{`${short(b.ts)}: ${formatCount(b.count)} events`}</title>
              </rect>
            ) : null,
          )}
        {drag && (
          <rect
            x={Math.min(drag.a, drag.b)}
            width={Math.abs(drag.b - drag.a)}
            y={0}
            height={HEIGHT}
            className="timeline-selection"
            vectorEffect="non-scaling-stroke"
          />
        )}
      </svg>
      <div className="timeline-axis-labels muted">
        <span aria-hidden="true">{from ? short(from) : ''}</span>
        <span className="timeline-middle">
          <span aria-hidden="true">{timeline ? `per ${timeline.interval}` : ''}</span>
          {onZoomOut && w && (
            <button type="button" className="secondary small" onClick={onZoomOut}>
              Zoom out
            </button>
          )}
        </span>
        <span aria-hidden="true">{to ? short(to) : ''}</span>
      </div>
    </section>
  );
});
