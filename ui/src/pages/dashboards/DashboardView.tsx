import { type CSSProperties, useEffect, useMemo, useState } from 'react';
import { api, errorText, getToken } from '../../api';
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
  const [moveError, setMoveError] = useState<string | null>(null);
  const [focusAfter, setFocusAfter] = useState<string | null>(null);

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
    const off = conn.subscribeDashboard(id, (u) => {
      setResults((r) => ({ ...r, [u.widget_id]: u.data as QueryData }));
    });
    return () => {
      off();
      conn.close();
    };
  }, [id]);

  // A moved widget changes place in the DOM: its button keeps the focus.
  useEffect(() => {
    if (!focusAfter) return;
    document.getElementById(focusAfter)?.focus();
    setFocusAfter(null);
  }, [focusAfter]);

  const ordered = useMemo(() => [...widgets].sort(byPlace), [widgets]);

  const move = async (w: Widget, d: Direction, buttonId: string) => {
    const next = moved(w.position, d);
    if (!next) return;
    const before = w.position;
    setMoveError(null);
    setWidgets((ws) => ws.map((x) => (x.id === w.id ? { ...x, position: next } : x)));
    setFocusAfter(buttonId);
    try {
      await api(`/api/widgets/${w.id}`, { method: 'PATCH', body: { position: next } });
    } catch (err) {
      setWidgets((ws) => ws.map((x) => (x.id === w.id ? { ...x, position: before } : x)));
      setMoveError(`Could not move “${w.title}”: ${errorText(err)}`);
    }
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
        <p role="status" className={`dash-live dash-live-${live}`}>
          <span className="dash-live-dot" aria-hidden="true" />
          {STATE_TEXT[live]}
        </p>
      </div>
      {moveError && (
        <p role="alert" className="error">
          {moveError}
        </p>
      )}
      {ordered.length === 0 && <p className="muted">This dashboard has no widgets yet.</p>}
      <div className="dash-grid">
        {ordered.map((w) => (
          <WidgetCard key={w.id} widget={w} data={results[w.id]} onMove={move} />
        ))}
      </div>
    </div>
  );
}

const ARROWS: Record<Direction, string> = { left: '←', right: '→', up: '↑', down: '↓' };

function WidgetCard(props: {
  widget: Widget;
  data: QueryData | undefined;
  onMove: (w: Widget, d: Direction, buttonId: string) => void;
}) {
  const { widget: w, data } = props;
  const p = w.position;
  const wCols = Math.max(1, Math.min(p.w, GRID_COLUMNS));
  const style = {
    '--x': Math.min(p.x, GRID_COLUMNS - wCols) + 1,
    '--y': p.y + 1,
    '--w': wCols,
    '--h': Math.max(1, p.h),
  } as CSSProperties;
  const headingId = `widget-${w.id}-title`;
  return (
    <section
      aria-labelledby={headingId}
      className="dash-widget"
      style={style}
      data-widget-id={w.id}
      data-position={`${p.x},${p.y},${p.w},${p.h}`}
    >
      <header className="dash-widget-head">
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
    </section>
  );
}
