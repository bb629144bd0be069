import { CATEGORY_PALETTE, colorsFor } from '@shared/chart-colors';
import type { Drill } from '../dashboard-address';
import type { Point } from './data';
import { markProps, PointLink } from './point-link';

/**
 * The `pie` kind: a slice per category (as many as the palette has colours), with a
 * legend of shares; a category of a field is a link to its events (in the legend; a
 * click on its slice opens them too).
 */
export function Pie({ pts, title, drill }: { pts: Point[]; title: string; drill?: Drill | undefined }) {
  const total = pts.reduce((s, p) => s + p.value, 0);
  if (!total) return <p className="muted">No data.</p>;
  const shown = pts.slice(0, CATEGORY_PALETTE.length);
  const colors = colorsFor(shown.map((p) => p.label));
  let angle = -Math.PI / 2;
  const slices = shown.map((p, i) => {
    const a0 = angle;
    const a1 = angle + (p.value / total) * Math.PI * 2;
    angle = a1;
    const large = a1 - a0 > Math.PI ? 1 : 0;
    const [x0, y0, x1, y1] = [Math.cos(a0), Math.sin(a0), Math.cos(a1), Math.sin(a1)].map((v) => 50 + 48 * v);
    const d =
      p.value === total
        ? 'M 50 2 A 48 48 0 1 1 49.99 2 Z'
        : `M 50 50 L ${x0} ${y0} A 48 48 0 ${large} 1 ${x1} ${y1} Z`;
    return <path key={p.label} d={d} fill={colors[i]} {...markProps(p, drill)} />;
  });
  const pct = (v: number) => `${((v / total) * 100).toFixed(1)} %`;
  return (
    <div className="dash-pie">
      <svg
        viewBox="0 0 100 100"
        role="img"
        aria-label={`${title}: pie chart, ${shown.map((p) => `${p.label} ${pct(p.value)}`).join(', ')}`}
      >
        {slices}
      </svg>
      <ul className="dash-legend dash-legend-column">
        {shown.map((p, i) => (
          <li key={p.label}>
            <svg width="10" height="10" aria-hidden="true">
              <rect width="10" height="10" fill={colors[i]} />
            </svg>
            <PointLink point={p} drill={drill} /> <span className="muted">{pct(p.value)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
