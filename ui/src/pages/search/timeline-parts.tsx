import { memo } from 'react';
import { formatCount } from '../../format';
import { type Bar, barSpan, seriesColor } from './timeline-scale';

/** The chart's drawing box: `width` × `height` pixels showing `[from, to)` up to `top` events. */
export interface Frame {
  width: number;
  height: number;
  from: number;
  to: number;
  top: number;
}

export const xOf = (f: Frame, ts: number) => ((ts - f.from) / (f.to - f.from)) * f.width;

/** A non-empty segment is a pixel high at least, so a lone error still shows in a bar of thousands. */
const heightOf = (f: Frame, count: number) => (count > 0 ? Math.max(1, (count / f.top) * f.height) : 0);

/**
 * The bars, each stacked by its series in `names`' order from the axis up (the plain
 * count while the split is not known). Drawn apart from hover and focus, which redraw
 * only the marks over them.
 */
export const Bars = memo(function Bars({
  bars,
  names,
  frame,
}: {
  bars: readonly Bar[];
  names: readonly string[];
  frame: Frame;
}) {
  return (
    <>
      {bars.map((bar) => {
        if (bar.count === 0) return null;
        const x0 = xOf(frame, bar.start);
        const w = xOf(frame, bar.end) - x0;
        const gap = Math.min(2, w * 0.2);
        const parts =
          bar.series && names.length > 0
            ? names.map((n) => [n, bar.series?.[n] ?? 0] as const)
            : [['all', bar.count] as const];
        let y = frame.height;
        return (
          <g key={bar.start} className="timeline-bar">
            {parts.map(([name, count]) => {
              if (count === 0) return null;
              const h = heightOf(frame, count);
              y -= h;
              return (
                <rect
                  key={name}
                  x={x0 + gap / 2}
                  width={Math.max(0.5, w - gap)}
                  y={y}
                  height={h}
                  className={`timeline-seg tl-${name === 'all' ? 'all' : seriesColor(name)}`}
                />
              );
            })}
          </g>
        );
      })}
    </>
  );
});

/** The counts of a bar, in the series' order, without the empty ones. */
export const barParts = (bar: Bar, names: readonly string[]) =>
  bar.series ? names.map((n) => [n, bar.series?.[n] ?? 0] as const).filter(([, c]) => c > 0) : [];

/** A bar in words, for the slider's value: `<span>: N events, error 3, info 37`. */
export function barText(bar: Bar, names: readonly string[]): string {
  const parts = barParts(bar, names).map(([n, c]) => `${n} ${formatCount(c)}`);
  const events = `${formatCount(bar.count)} ${bar.count === 1 ? 'event' : 'events'}`;
  return `${barSpan(bar)}: ${[events, ...parts].join(', ')}`;
}

/**
 * The hovered or focused bar's span, its count per series and its total, beside the bar
 * (left of it past the chart's middle). For the eyes: the slider's value says the same.
 */
export function Tooltip({ bar, names, frame }: { bar: Bar; names: readonly string[]; frame: Frame }) {
  const x0 = xOf(frame, bar.start);
  const x1 = xOf(frame, bar.end);
  const side = (x0 + x1) / 2 < frame.width / 2 ? { left: x1 + 8 } : { right: frame.width - x0 + 8 };
  return (
    <div className="timeline-tooltip" style={side} aria-hidden="true">
      <div className="timeline-tooltip-time">{barSpan(bar)}</div>
      <table>
        <tbody>
          {barParts(bar, names).map(([name, count]) => (
            <tr key={name}>
              <th scope="row">
                <span className={`timeline-swatch tl-${seriesColor(name)}`} />
                {name}
              </th>
              <td>{formatCount(count)}</td>
            </tr>
          ))}
          <tr className="timeline-tooltip-total">
            <th scope="row">Total</th>
            <td>{formatCount(bar.count)}</td>
          </tr>
        </tbody>
      </table>
    </div>
  );
}

/** The colours of the series with their counts over the whole chart. */
export function Legend({ names, totals }: { names: readonly string[]; totals: Record<string, number> }) {
  if (names.length === 0) return null;
  return (
    <ul className="timeline-legend" aria-label="Severities">
      {names.map((name) => (
        <li key={name}>
          <span className={`timeline-swatch tl-${seriesColor(name)}`} aria-hidden="true" />
          {`${name} ${formatCount(totals[name] ?? 0)}`}
        </li>
      ))}
    </ul>
  );
}

/**
 * The span dragged across, above it: its times, Zoom in (to it) and Clear. Explain, beside
 * Zoom out, explains it.
 */
export function SelectionBar(props: {
  text: string;
  /** The selection's middle, from 0 (the chart's left) to 1. */
  center: number;
  onZoom: (() => void) | undefined;
  onClear: () => void;
}) {
  const { center } = props;
  const place =
    center < 0.2
      ? { left: 0 }
      : center > 0.8
        ? { right: 0 }
        : { left: `${center * 100}%`, transform: 'translateX(-50%)' };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not a form's fieldset
    <div className="timeline-selection-bar" style={place} role="group" aria-label={`Selected ${props.text}`}>
      <span className="timeline-selection-time">{props.text}</span>
      {props.onZoom && (
        <button type="button" className="secondary small" onClick={props.onZoom}>
          Zoom in
        </button>
      )}
      <button type="button" className="secondary small" onClick={props.onClear}>
        Clear
      </button>
    </div>
  );
}
