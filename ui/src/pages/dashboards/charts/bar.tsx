import { fixedColors, PLAIN_COLOR } from '@shared/chart-colors';
import { formatCount } from '../../../format';
import type { Drill } from '../dashboard-address';
import type { Point } from './data';
import { markProps, PointLink } from './point-link';

/**
 * The `bar` kind over categories: horizontal bars, one per category, each an SVG bar
 * scaled to the largest (bars over time are time.tsx's). A category of a field is a link
 * to its events, and a click on its bar opens them too.
 */
export function Bars({ pts, title, drill }: { pts: Point[]; title: string; drill?: Drill | undefined }) {
  if (!pts.length) return <p className="muted">No data.</p>;
  const max = Math.max(1, ...pts.map((p) => p.value));
  const names = pts.map((p) => p.label);
  const fixed = fixedColors(names);
  return (
    <ul className="dash-bars" aria-label={`${title}: bar chart`}>
      {pts.map((p, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: labels may repeat
        <li key={i}>
          <PointLink point={p} drill={drill} className="dash-bar-label" />
          <svg
            viewBox="0 0 100 10"
            preserveAspectRatio="none"
            aria-hidden="true"
            {...markProps(p, drill, 'dash-bar')}
          >
            <rect x="0" y="0" height="10" width={(p.value / max) * 100} fill={fixed?.[i] ?? PLAIN_COLOR} />
          </svg>
          <span className="dash-bar-value">{formatCount(p.value)}</span>
        </li>
      ))}
    </ul>
  );
}
