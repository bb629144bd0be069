import type { MouseEvent, ReactNode } from 'react';
import { cls } from '../../../components/util';
import { Link, navigate } from '../../../router';
import type { Drill } from '../dashboard-address';
import { cellText, type Point } from './data';

/** `host: web-1 · app: nginx`: the values a link searches for, for its tooltip. */
const described = (filter: Readonly<Record<string, unknown>>) =>
  Object.entries(filter)
    .map(([field, value]) => `${field}: ${cellText(value) || '(none)'}`)
    .join(' · ');

const hrefOf = (point: Point, drill: Drill | undefined) =>
  point.filter && drill ? drill.values(point.filter) : null;

/**
 * A point's label: a link to its events on the search page when it is of field values
 * and the widget leads somewhere (the keyboard's way there; marks are the mouse's).
 */
export function PointLink(props: {
  point: Point;
  drill: Drill | undefined;
  className?: string;
  children?: ReactNode;
}) {
  const { point, drill } = props;
  const href = hrefOf(point, drill);
  if (!href || !point.filter)
    return (
      <span className={props.className} title={point.label}>
        {props.children ?? point.label}
      </span>
    );
  return (
    <Link
      to={href}
      className={cls(props.className, 'dash-drill')}
      title={`Search ${described(point.filter)}`}
    >
      {props.children ?? point.label}
    </Link>
  );
}

/**
 * What a drawn mark of a point (a bar, a slice) takes so that a click on it opens the
 * point's events as its label's link does: its class (`className` and, when it leads
 * somewhere, `dash-mark`) and the click.
 */
export function markProps(point: Point, drill: Drill | undefined, className?: string) {
  const href = hrefOf(point, drill);
  if (!href) return className ? { className } : {};
  return {
    className: cls(className, 'dash-mark'),
    onClick: (e: MouseEvent) => {
      if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      navigate(href);
    },
  };
}
