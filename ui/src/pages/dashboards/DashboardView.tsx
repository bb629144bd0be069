import {
  type CSSProperties,
  type FormEvent,
  type KeyboardEvent,
  type PointerEvent,
  useEffect,
  useMemo,
  useRef,
  useState,
} from 'react';
import { api, errorText, getToken } from '../../api';
import { ConnectionLost } from '../../components/feedback';
import { type LiveState, openLive } from '../../live';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { type QueryData, Visualization } from './charts';
import './dashboards.css';

export const GRID_COLUMNS = 12;

export interface Position {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Widget {
  id: number;
  title: string;
  description: string;
  query: { type: string; params: Record<string, unknown> };
  visualization: { kind: string; options: Record<string, unknown> };
  position: Position;
  read_only: boolean;
}

export interface Dashboard {
  id: number;
  title: string;
  description: string;
  widgets: Widget[];
  updated_at: string;
}

type Direction = 'left' | 'right' | 'up' | 'down';

const STATE_TEXT: Record<LiveState, string> = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Offline',
};

/** The position one step in a direction, kept inside the 12 columns; null when it cannot move. */
export function moved(p: Position, d: Direction): Position | null {
  const w = Math.min(p.w, GRID_COLUMNS);
  const next = { ...p };
  if (d === 'left') next.x = Math.max(0, p.x - 1);
  if (d === 'right') next.x = Math.min(GRID_COLUMNS - w, p.x + 1);
  if (d === 'up') next.y = Math.max(0, p.y - 1);
  if (d === 'down') next.y = p.y + 1;
  return next.x === p.x && next.y === p.y ? null : next;
}

const byPlace = (a: Widget, b: Widget) => a.position.y - b.position.y || a.position.x - b.position.x;

const samePlace = (a: Position, b: Position) => a.x === b.x && a.y === b.y && a.w === b.w && a.h === b.h;

export const overlaps = (a: Position, b: Position) =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/**
 * The layout with widget `id` at `pos`, and every widget it would overlap pushed down
 * until nothing overlaps (simple vertical compaction: widgets only ever move down, in
 * layout order; read-only widgets cannot be saved, so they stay and what meets them goes
 * below them, the placed widget included).
 */
export function placed(widgets: readonly Widget[], id: number, pos: Position): Widget[] {
  const done: Widget[] = widgets.filter((w) => w.read_only && w.id !== id);
  const settle = (w: Widget) => {
    let p = w.position;
    for (
      let hit = done.find((d) => overlaps(d.position, p));
      hit;
      hit = done.find((d) => overlaps(d.position, p))
    )
      p = { ...p, y: hit.position.y + hit.position.h };
    done.push(p === w.position ? w : { ...w, position: p });
  };
  const self = widgets.find((w) => w.id === id);
  if (self) settle({ ...self, position: pos });
  for (const w of [...widgets].sort(byPlace)) if (!w.read_only && w.id !== id) settle(w);
  const byId = new Map(done.map((w) => [w.id, w]));
  return widgets.map((w) => byId.get(w.id) ?? w);
}

/** A size one step bigger or smaller, kept inside the 12 columns; null when it cannot change. */
export function resized(p: Position, d: Direction): Position | null {
  const next = { ...p };
  if (d === 'left') next.w = Math.max(1, p.w - 1);
  if (d === 'right') next.w = Math.min(GRID_COLUMNS - p.x, p.w + 1);
  if (d === 'up') next.h = Math.max(1, p.h - 1);
  if (d === 'down') next.h = p.h + 1;
  return next.w === p.w && next.h === p.h ? null : next;
}

const KEY_DIRECTION: Record<string, Direction> = {
  ArrowLeft: 'left',
  ArrowRight: 'right',
  ArrowUp: 'up',
  ArrowDown: 'down',
};

/** A template path from a title: `saved/` and the title's letters and digits. */
const templatePathFor = (title: string) =>
  `saved/${
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 100) || 'dashboard'
  }`;

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

const ARROWS: Record<Direction, string> = { left: '←', right: '→', up: '↑', down: '↓' };

/** Saves the dashboard as a template at a path (POST /api/dashboards/:id/templates). */
function SaveTemplate(props: {
  id: number;
  title: string;
  onSaved: (path: string) => void;
  onCancel: () => void;
}) {
  const [path, setPath] = useState(() => templatePathFor(props.title));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  useEffect(() => inputRef.current?.focus(), []);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const saved = await api<{ path: string }>(`/api/dashboards/${props.id}/templates`, { body: { path } });
      props.onSaved(saved.path);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      id="dash-template-form"
      className="dash-template"
      aria-label="Save as template"
      onSubmit={(e) => void submit(e)}
    >
      <div className="field">
        <label htmlFor="dash-template-path">Template path</label>
        <input
          id="dash-template-path"
          ref={inputRef}
          value={path}
          onChange={(e) => setPath(e.target.value)}
          required
          maxLength={200}
          pattern="[A-Za-z0-9_.\/\-]+"
          aria-describedby="dash-template-hint"
          aria-invalid={error ? true : undefined}
        />
        <span id="dash-template-hint" className="muted">
          Letters, digits and _-./, e.g. team/overview. Every user can create dashboards from it.
        </span>
      </div>
      <button type="submit" disabled={busy}>
        Save template
      </button>
      <button type="button" className="secondary" onClick={props.onCancel}>
        Cancel
      </button>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </form>
  );
}

function WidgetCard(props: {
  widget: Widget;
  data: QueryData | undefined;
  dragging: boolean;
  onMove: (w: Widget, d: Direction, buttonId: string) => void;
  onResize: (w: Widget, d: Direction, handleId: string) => void;
  drag: {
    start: (mode: 'move' | 'resize', e: PointerEvent<HTMLElement>) => void;
    move: (e: PointerEvent<HTMLElement>) => void;
    end: (e: PointerEvent<HTMLElement>, cancelled: boolean) => void;
  };
}) {
  const { widget: w, data, drag } = props;
  const p = w.position;
  const wCols = Math.max(1, Math.min(p.w, GRID_COLUMNS));
  const style = {
    '--x': Math.min(p.x, GRID_COLUMNS - wCols) + 1,
    '--y': p.y + 1,
    '--w': wCols,
    '--h': Math.max(1, p.h),
  } as CSSProperties;
  const headingId = `widget-${w.id}-title`;
  const resizeId = `widget-${w.id}-resize`;
  const pointer = (mode: 'move' | 'resize') => ({
    onPointerDown: (e: PointerEvent<HTMLElement>) => drag.start(mode, e),
    onPointerMove: drag.move,
    onPointerUp: (e: PointerEvent<HTMLElement>) => drag.end(e, false),
    onPointerCancel: (e: PointerEvent<HTMLElement>) => drag.end(e, true),
  });
  const onResizeKey = (e: KeyboardEvent<HTMLButtonElement>) => {
    const d = KEY_DIRECTION[e.key];
    if (!d || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    props.onResize(w, d, resizeId);
  };
  const classes = ['dash-widget', w.read_only ? '' : 'dash-movable', props.dragging ? 'dash-dragging' : '']
    .filter(Boolean)
    .join(' ');
  return (
    <section
      aria-labelledby={headingId}
      className={classes}
      style={style}
      data-widget-id={w.id}
      data-position={`${p.x},${p.y},${p.w},${p.h}`}
    >
      <header
        className="dash-widget-head"
        title={w.read_only ? undefined : 'Drag to move'}
        {...(w.read_only ? {} : pointer('move'))}
      >
        {!w.read_only && (
          <span className="dash-grip" aria-hidden="true">
            ⠿
          </span>
        )}
        <h2 id={headingId}>{w.title}</h2>
        {w.read_only && <span className="badge dash-readonly">read-only</span>}
        {!w.read_only && (
          // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not a form's fieldset
          <div className="dash-move" role="group" aria-label={`Move ${w.title}`}>
            {(['left', 'right', 'up', 'down'] as const).map((d) => {
              const id = `widget-${w.id}-move-${d}`;
              const can = moved(p, d) !== null;
              return (
                <button
                  key={d}
                  id={id}
                  type="button"
                  className="secondary small"
                  aria-label={`Move ${w.title} ${d}`}
                  title={`Move ${d}`}
                  aria-disabled={!can}
                  onClick={() => can && props.onMove(w, d, id)}
                >
                  <span aria-hidden="true">{ARROWS[d]}</span>
                </button>
              );
            })}
          </div>
        )}
      </header>
      {/* Scrolls when its content is taller than the widget: focusable, so keys scroll it. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll container must take the focus */}
      <div className="dash-widget-body" tabIndex={0}>
        {!data && <p className="muted">Loading…</p>}
        {data?.status === 'ERROR' && (
          <p role="alert" className="error">
            {data.error ?? 'The query failed.'}
          </p>
        )}
        {data && data.status !== 'ERROR' && (
          <Visualization
            kind={w.visualization.kind}
            options={w.visualization.options ?? {}}
            data={data}
            title={w.title}
            fields={w.query.params.fields}
          />
        )}
      </div>
      {!w.read_only && (
        <button
          id={resizeId}
          type="button"
          className="dash-resize"
          aria-label={`Resize ${w.title}`}
          title="Drag to resize (or use the arrow keys)"
          onKeyDown={onResizeKey}
          {...pointer('resize')}
        />
      )}
    </section>
  );
}
