import { type CSSProperties, type KeyboardEvent, type MouseEvent, useState } from 'react';
import { formatCount, formatTs } from '../../../format';
import { Link } from '../../../router';
import type { Drill } from '../dashboard-address';
import type { Bucket } from './data';

const NEXT: Record<string, (i: number, n: number) => number> = {
  ArrowRight: (i, n) => Math.min(n - 1, i + 1),
  ArrowLeft: (i) => Math.max(0, i - 1),
  Home: () => 0,
  End: (_, n) => n - 1,
};

/** `2026-01-02 12:00–12:05`: a bucket's span as its link says it. */
function spanText(from: number, to: number): string {
  const a = formatTs(from).slice(0, 16);
  const b = formatTs(to).slice(0, 16);
  return `${a}–${a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b}`;
}

/**
 * Over a chart in time, a link to the events of one drawn bucket on the search page (the
 * widget's query in that bucket's span), over its column: the one under the pointer, so
 * a click searches the bucket clicked, else the one chosen by the arrow keys (Home, End),
 * the latest at first, Enter following it. One link, not one a bucket: a chart of 120
 * buckets is one tab stop, and light.
 */
export function BucketLinks(props: {
  buckets: readonly Bucket[];
  step: number;
  drill: Drill;
  title: string;
}) {
  const { buckets, step, drill } = props;
  const n = buckets.length;
  const [chosen, setChosen] = useState<number | null>(null);
  const [hovered, setHovered] = useState<number | null>(null);
  const at = Math.min(hovered ?? chosen ?? n - 1, n - 1);
  const bucket = buckets[at] as Bucket;
  const label = `${spanText(bucket.ts, bucket.ts + step)}: ${formatCount(bucket.count)} events`;
  const onKeyDown = (e: KeyboardEvent<HTMLAnchorElement>) => {
    const next = NEXT[e.key]?.(at, n);
    if (next === undefined || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    setHovered(null);
    setChosen(next);
  };
  const onMouseMove = (e: MouseEvent<HTMLDivElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    if (box.width > 0)
      setHovered(Math.max(0, Math.min(n - 1, Math.floor(((e.clientX - box.left) / box.width) * n))));
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: a link and its label, not a form's fieldset
    <div
      className="dash-buckets"
      role="group"
      aria-label={`${props.title}: search a time (arrow keys choose it)`}
      onMouseMove={onMouseMove}
      onMouseLeave={() => setHovered(null)}
    >
      <Link
        to={drill.span(bucket.ts, bucket.ts + step)}
        aria-label={label}
        title={`Search ${label}`}
        style={{ '--at': `${((at + 0.5) / n) * 100}%`, '--span': `${100 / n}%` } as CSSProperties}
        onKeyDown={onKeyDown}
      />
    </div>
  );
}
