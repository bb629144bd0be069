import { fixedColors, PLAIN_COLOR } from '@shared/chart-colors';
import { formatCount } from '../../../format';
import type { Point } from './data';

/**
 * The `bar` kind over categories: horizontal bars, one per category, each an SVG bar
 * scaled to the largest (bars over time are time.tsx's).
 */
export function Bars({ pts, title }: { pts: Point[]; title: string }) {
  if (!pts.length) return <p className="muted">No data.</p>;
  const max = Math.max(1, ...pts.map((p) => p.value));
  const names = pts.map((p) => p.label);
  const fixed = fixedColors(names);
  return (
    <ul className="dash-bars" aria-label={`${title}: bar chart`}>
      {pts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat
        <li key={i}>
          <span className="dash-bar-label" title={p.label}>
            {p.label}
          </span>
          <svg className="dash-bar" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true">
            <rect x="0" y="0" height="10" width={(p.value / max) * 100} fill={fixed?.[i] ?? PLAIN_COLOR} />
          </svg>
          <span className="dash-bar-value">{formatCount(p.value)}</span>
        </li>
      ))}
    </ul>
  );
}
