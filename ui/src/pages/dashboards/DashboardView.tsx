import { type PointerEvent, useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, getToken, type Schemas } from '../../api';
import { ConnectionLost } from '../../components/feedback';
import { type LiveState, openLive } from '../../live';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import type { QueryData } from './charts';
import './dashboards.css';
import {
  byPlace,
  type Direction,
  GRID_COLUMNS,
  moved,
  type Position,
  placed,
  resized,
  samePlace,
  type Widget,
} from './grid';
import { SaveTemplate } from './SaveTemplate';
import { WidgetCard } from './WidgetCard';

const STATE_TEXT: Record<LiveState, string> = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Offline',
};

export type Dashboard = Schemas['Dashboard'];

interface Drag {
  id: number;
  mode: 'move' | 'resize';
  pointerId: number;
  startX: number;
  startY: number;
  start: Position;
  pos: Position;
  /** One grid column and one row, in CSS pixels (cell plus gap). */
  colStep: number;
  rowStep: number;
}

/** `/dashboards/:id` */
export function DashboardRoute({ path }: { path: string }) {
  const m = /^\/dashboards\/(\d+)$/.exec(path);
  if (!m) {
    return (
      <div className="page">
        <h1>Page not found</h1>
        <p>
          Nothing lives at <code>{path}</code>. <Link to="/dashboards">Go to Dashboards</Link>.
        </p>
      </div>
    );
  }
  return <DashboardView key={m[1]} id={Number(m[1])} />;
}

function DashboardView({ id }: { id: number }) {
  const { data, error, loading } = useApi<Dashboard>(`/api/dashboards/${id}`);
  const [widgets, setWidgets] = useState<Widget[]>([]);
  const [results, setResults] = useState<Record<number, QueryData>>({});
  const [live, setLive] = useState<LiveState>('connecting');
  const connRef = useRef<ReturnType<typeof openLive> | null>(null);
  const [moveError, setMoveError] = useState<string | null>(null);
  const [focusAfter, setFocusAfter] = useState<string | null>(null);
  const [drag, setDrag] = useState<Drag | null>(null);
  const [templateOpen, setTemplateOpen] = useState(false);
  const [templateNotice, setTemplateNotice] = useState('');
  const dragRef = useRef<Drag | null>(null);
  const gridRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (data) setWidgets(data.widgets);
  }, [data]);

  useEffect(() => {
    if (data) document.title = `${data.title} · Dashboards · Logscope`;
  }, [data]);

  // One connection and one dashboard subscription while the dashboard is open.
  useEffect(() => {
    const token = getToken();
    if (!token) return;
    const conn = openLive({ token, onState: setLive });
    connRef.current = conn;
    const off = conn.subscribeDashboard(id, (u) => {
      setResults((r) => ({ ...r, [u.widget_id]: u.data as QueryData }));
    });
    return () => {
      off();
      conn.close();
      if (connRef.current === conn) connRef.current = null;
    };
  }, [id]);

  // A moved widget changes place in the DOM: its button keeps the focus.
  useEffect(() => {
    if (!focusAfter) return;
    document.getElementById(focusAfter)?.focus();
    setFocusAfter(null);
  }, [focusAfter]);

  // Layout order of the saved positions: kept while dragging, so that the dragged widget's
  // element is never moved in the DOM (it holds the pointer capture).
  const ordered = useMemo(() => [...widgets].sort(byPlace), [widgets]);
  const preview = useMemo(
    () => (drag ? new Map(placed(widgets, drag.id, drag.pos).map((w) => [w.id, w.position])) : null),
    [widgets, drag],
  );

  /** Shows `next` and saves every widget whose position changed; all back on a failure. */
  const commit = async (next: Widget[], what: string) => {
    const before = widgets;
    const was = new Map(before.map((w) => [w.id, w.position]));
    const changed = next.filter((w) => !samePlace(w.position, was.get(w.id) ?? w.position));
    if (!changed.length) return;
    setMoveError(null);
    setWidgets(next);
    try {
      await Promise.all(
        changed.map((w) => api(`/api/widgets/${w.id}`, { method: 'PATCH', body: { position: w.position } })),
      );
    } catch (err) {
      setWidgets(before);
      setMoveError(`Could not ${what}: ${errorText(err)}`);
    }
  };

  const move = async (w: Widget, d: Direction, buttonId: string) => {
    const next = moved(w.position, d);
    if (!next) return;
    setFocusAfter(buttonId);
    await commit(placed(widgets, w.id, next), `move “${w.title}”`);
  };

  const resizeBy = async (w: Widget, d: Direction, handleId: string) => {
    const next = resized(w.position, d);
    if (!next) return;
    setFocusAfter(handleId);
    await commit(placed(widgets, w.id, next), `resize “${w.title}”`);
  };

  // Dragging: the header moves a widget, the corner handle resizes it, both by whole cells.
  const dragStart = (w: Widget, mode: Drag['mode'], e: PointerEvent<HTMLElement>) => {
    if (e.button !== 0 || dragRef.current || w.read_only) return;
    if (mode === 'move' && (e.target as HTMLElement).closest('button')) return;
    const grid = gridRef.current;
    if (!grid || window.matchMedia('(max-width: 720px)').matches) return;
    const css = getComputedStyle(grid);
    const colGap = Number.parseFloat(css.columnGap) || 0;
    const rowGap = Number.parseFloat(css.rowGap) || 0;
    const row = Number.parseFloat(css.gridAutoRows) || 56;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    const d: Drag = {
      id: w.id,
      mode,
      pointerId: e.pointerId,
      startX: e.clientX,
      startY: e.clientY,
      start: w.position,
      pos: w.position,
      colStep: (grid.getBoundingClientRect().width + colGap) / GRID_COLUMNS,
      rowStep: row + rowGap,
    };
    dragRef.current = d;
    setDrag(d);
  };

  const dragMove = (e: PointerEvent<HTMLElement>) => {
    const d = dragRef.current;
    if (!d || e.pointerId !== d.pointerId) return;
    const dc = Math.round((e.clientX - d.startX) / d.colStep);
    const dr = Math.round((e.clientY - d.startY) / d.rowStep);
    const s = d.start;
    const w = Math.min(s.w, GRID_COLUMNS);
    const pos =
      d.mode === 'move'
        ? { ...s, x: Math.max(0, Math.min(GRID_COLUMNS - w, s.x + dc)), y: Math.max(0, s.y + dr) }
        : { ...s, w: Math.max(1, Math.min(GRID_COLUMNS - s.x, s.w + dc)), h: Math.max(1, s.h + dr) };
    if (samePlace(pos, d.pos)) return;
    const next = { ...d, pos };
    dragRef.current = next;
    setDrag(next);
  };

  const dragEnd = (e: PointerEvent<HTMLElement>, cancelled: boolean) => {
    const d = dragRef.current;
    if (!d || e.pointerId !== d.pointerId) return;
    dragRef.current = null;
    setDrag(null);
    const w = widgets.find((x) => x.id === d.id);
    if (!w || cancelled || samePlace(d.pos, d.start)) return;
    void commit(placed(widgets, d.id, d.pos), `${d.mode === 'move' ? 'move' : 'resize'} “${w.title}”`);
  };

  if (error)
    return (
      <div className="page">
        <h1>Dashboard</h1>
        <p role="alert" className="error">
          {error}
        </p>
        <p>
          <Link to="/dashboards">All dashboards</Link>
        </p>
      </div>
    );
  if (loading && !data)
    return (
      <div className="page">
        <p className="muted">Loading…</p>
      </div>
    );
  if (!data) return null;

  return (
    <div className="page dash-page">
      <div className="dash-head">
        <div>
          <p className="dash-crumb">
            <Link to="/dashboards">Dashboards</Link>
          </p>
          <h1>{data.title}</h1>
          {data.description && <p className="muted dash-description">{data.description}</p>}
        </div>
        <div className="dash-actions">
          <button
            type="button"
            className="secondary small"
            aria-expanded={templateOpen}
            aria-controls="dash-template-form"
            onClick={() => setTemplateOpen((o) => !o)}
          >
            Save as template
          </button>
          <p role="status" className={`dash-live dash-live-${live}`}>
            <span className="dash-live-dot" aria-hidden="true" />
            {STATE_TEXT[live]}
          </p>
        </div>
      </div>
      {templateOpen && (
        <SaveTemplate
          id={id}
          title={data.title}
          onSaved={(path) => {
            setTemplateOpen(false);
            setTemplateNotice(`Saved as template “${path}”.`);
          }}
          onCancel={() => setTemplateOpen(false)}
        />
      )}
      {live === 'reconnecting' && (
        <ConnectionLost
          what="Widgets update again once it is back."
          onRetry={() => connRef.current?.retryNow()}
        />
      )}
      <p role="status" className="muted dash-template-notice">
        {templateNotice}
      </p>
      {moveError && (
        <p role="alert" className="error">
          {moveError}
        </p>
      )}
      {ordered.length === 0 && <p className="muted">This dashboard has no widgets yet.</p>}
      <div className="dash-grid" ref={gridRef}>
        {ordered.map((w) => {
          const position = preview?.get(w.id) ?? w.position;
          return (
            <WidgetCard
              key={w.id}
              widget={position === w.position ? w : { ...w, position }}
              data={results[w.id]}
              dragging={drag?.id === w.id}
              onMove={move}
              onResize={resizeBy}
              drag={{
                start: (mode, e) => dragStart(w, mode, e),
                move: dragMove,
                end: dragEnd,
              }}
            />
          );
        })}
      </div>
    </div>
  );
}
