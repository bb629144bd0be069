import { memo } from 'react';
import type { TimelineResults } from '../api';
import { formatCount, formatTs } from '../format';

const HEIGHT = 100;

const short = (seconds: number) => formatTs(seconds).slice(0, 16);

/** Event counts per bucket as SVG bars, drawn over the search's window. */
export const Timeline = memo(function Timeline(props: {
  timeline: TimelineResults | null;
  window: { ts_from: number; ts_to: number } | null;
}) {
  const { timeline, window: w } = props;
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

  return (
    <section aria-label="Timeline" className="timeline">
      <div className="timeline-max muted" aria-hidden="true">
        {timeline ? formatCount(max) : ''}
      </div>
      <svg
        className="timeline-chart"
        viewBox={`0 0 ${n} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={label}
      >
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
      </svg>
      <div className="timeline-axis-labels muted" aria-hidden="true">
        <span>{from ? short(from) : ''}</span>
        <span>{timeline ? `per ${timeline.interval}` : ''}</span>
        <span>{to ? short(to) : ''}</span>
      </div>
    </section>
  );
});
