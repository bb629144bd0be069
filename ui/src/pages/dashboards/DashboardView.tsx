import { useEffect, useMemo, useRef, useState } from 'react';
import { api, errorText, getToken, type Schemas } from '../../api';
import { ConnectionLost } from '../../components/feedback';
import { type Live, type LiveState, openLive } from '../../live';
import { Link, navigate, useLocation } from '../../router';
import { useApi } from '../../useApi';
import { useMe } from '../../useMe';
import './dashboards.css';
import './dash-edit.css';
import { DashboardRangeForm, DashboardRangeSelect, useDashboardRange } from './DashboardTimeRange';
import { dashboardPath, drillOf, rangeOfAddress } from './dashboard-address';
import { ConfirmDialog, RenameDialog, type WidgetChanges, WidgetDialog } from './dialogs';
import type { Widget } from './grid';
import { MetricWidgetDialog } from './MetricWidgetDialog';
import { SaveTemplate } from './SaveTemplate';
import { useGridLayout } from './useGridLayout';
import { useWidgetResults } from './useWidgetResults';
import { WidgetCard, type WidgetEditing } from './WidgetCard';

const STATE_TEXT: Record<LiveState, string> = {
  connecting: 'Connecting…',
  open: 'Live',
  reconnecting: 'Reconnecting…',
  closed: 'Offline',
};

export type Dashboard = Schemas['Dashboard'];

/** The dialog open on the dashboard, if any. */
type Open =
  | { kind: 'edit' | 'remove'; widget: Widget }
  | { kind: 'rename' }
  | { kind: 'delete' }
  | { kind: 'template' };

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
  const me = useMe();
  const { href } = useLocation();
  const range = useMemo(() => rangeOfAddress(new URL(href, window.location.origin).searchParams), [href]);
  const [head, setHead] = useState<{ title: string; description: string } | null>(null);
  const [widgets, setWidgets] = useState<Widget[]>([]);
  const [live, setLive] = useState<LiveState>('connecting');
  const [conn, setConn] = useState<Live | null>(null);
  const [moveError, setMoveError] = useState<string | null>(null);
  const [focusAfter, setFocusAfter] = useState<string | null>(null);
  const [editMode, setEditMode] = useState(false);
  const [open, setOpen] = useState<Open | null>(null);
  const [notice, setNotice] = useState('');
  const gridRef = useRef<HTMLDivElement>(null);
  const titleRef = useRef<HTMLHeadingElement>(null);
  const results = useWidgetResults(conn, id, widgets, range);
  const layout = useGridLayout({ widgets, setWidgets, gridRef, focus: setFocusAfter, onError: setMoveError });
  const rangeState = useDashboardRange(range, (next) => navigate(dashboardPath(id, next)));

  useEffect(() => {
    if (!data) return;
    setWidgets(data.widgets);
    setHead({ title: data.title, description: data.description });
  }, [data]);

  useEffect(() => {
    if (head) document.title = `${head.title} · Dashboards · Logscope`;
  }, [head]);

  // One connection while the dashboard is open; useWidgetResults subscribes on it.
  useEffect(() => {
    const token = getToken();
    if (!token) return;
    const c = openLive({ token, onState: setLive });
    setConn(c);
    return () => {
      c.close();
      setConn(null);
    };
  }, []);

  // A control whose widget moved (or a new widget's) keeps or takes the focus.
  useEffect(() => {
    if (!focusAfter) return;
    const el = document.getElementById(focusAfter);
    el?.focus();
    el?.scrollIntoView({ block: 'nearest' });
    setFocusAfter(null);
  }, [focusAfter]);

  // Only its owner and administrators change a dashboard (the API refuses others).
  const canEdit = Boolean(me && data && (me.is_admin || me.id === data.owner));
  const editing = canEdit && editMode;
  const nowMs = Date.now();

  const base = `/api/dashboards/${id}`;
  const saveWidget = async (w: Widget, changes: WidgetChanges) => {
    const saved = await api<Widget>(`/api/widgets/${w.id}`, { method: 'PATCH', body: changes });
    setWidgets((ws) => ws.map((x) => (x.id === w.id ? saved : x)));
    setOpen(null);
    setNotice(`Saved “${saved.title}”.`);
    setFocusAfter(`widget-${w.id}-edit`);
  };
  const duplicate = async (w: Widget) => {
    setNotice('');
    setMoveError(null);
    try {
      const copy = await api<Widget>(`${base}/widgets`, {
        body: {
          title: `${w.title} (copy)`.slice(0, 200),
          description: w.description,
          query: w.query,
          visualization: w.visualization,
          refresh_interval: w.refresh_interval,
        },
      });
      setWidgets((ws) => [...ws, copy]);
      setNotice(`Duplicated “${w.title}” as “${copy.title}”, at the bottom.`);
      setFocusAfter(`widget-${copy.id}-edit`);
    } catch (err) {
      setMoveError(`Could not duplicate “${w.title}”: ${errorText(err)}`);
    }
  };
  const remove = async (w: Widget) => {
    await api(`${base}/widgets/${w.id}`, { method: 'DELETE' });
    setWidgets((ws) => ws.filter((x) => x.id !== w.id));
    setOpen(null);
    setNotice(`Removed “${w.title}”.`);
    titleRef.current?.focus();
  };
  const rename = async (fields: { title: string; description: string }) => {
    const saved = await api<Dashboard>(base, { method: 'PATCH', body: fields });
    setHead({ title: saved.title, description: saved.description });
    setOpen(null);
    setNotice(`Renamed to “${saved.title}”.`);
    setFocusAfter('dash-rename');
  };
  const deleteDashboard = async () => {
    await api(base, { method: 'DELETE' });
    navigate('/dashboards');
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
  if (!data || !head) return null;

  /** What edit mode offers on widget `w` (as saved; it may be shown elsewhere while dragged). */
  const editingOf = (w: Widget): WidgetEditing | null =>
    editing
      ? {
          onMove: layout.move,
          onResize: layout.resize,
          drag: layout.handlers(w),
          onEdit: (x) => setOpen({ kind: 'edit', widget: x }),
          onDuplicate: (x) => void duplicate(x),
          onRemove: (x) => setOpen({ kind: 'remove', widget: x }),
        }
      : null;
  const onlyHere = widgets.filter((w) => w.dashboards.length <= 1).length;

  return (
    <div className={`page dash-page${editing ? ' dash-editing' : ''}`}>
      <div className="dash-head">
        <div>
          <p className="dash-crumb">
            <Link to="/dashboards">Dashboards</Link>
          </p>
          <h1 ref={titleRef} tabIndex={-1}>
            {head.title}
          </h1>
          {head.description && <p className="muted dash-description">{head.description}</p>}
        </div>
        <div className="dash-actions">
          <DashboardRangeSelect state={rangeState} />
          <button
            type="button"
            className="secondary small"
            aria-expanded={open?.kind === 'template'}
            aria-controls="dash-template-form"
            onClick={() => setOpen((o) => (o?.kind === 'template' ? null : { kind: 'template' }))}
          >
            Save as template
          </button>
          {canEdit && (
            <button
              type="button"
              className="secondary small dash-edit-toggle"
              aria-pressed={editing}
              onClick={() => setEditMode((e) => !e)}
            >
              Edit
            </button>
          )}
          <p role="status" className={`dash-live dash-live-${live}`}>
            <span className="dash-live-dot" aria-hidden="true" />
            {STATE_TEXT[live]}
          </p>
        </div>
      </div>
      <DashboardRangeForm state={rangeState} />
      {editing && (
        // biome-ignore lint/a11y/useSemanticElements: a toolbar of buttons, not a form's fieldset
        <div className="dash-edit-bar" role="group" aria-label="Edit dashboard">
          <span className="muted">Editing: drag a widget by its title, resize it by its corner.</span>
          <button
            id="dash-rename"
            type="button"
            className="secondary small"
            onClick={() => setOpen({ kind: 'rename' })}
          >
            Rename…
          </button>
          <button type="button" className="secondary small" onClick={() => setOpen({ kind: 'delete' })}>
            Delete dashboard…
          </button>
          <button type="button" className="small" onClick={() => setEditMode(false)}>
            Done
          </button>
        </div>
      )}
      {open?.kind === 'template' && (
        <SaveTemplate
          id={id}
          title={head.title}
          onSaved={(path) => {
            setOpen(null);
            setNotice(`Saved as template “${path}”.`);
          }}
          onCancel={() => setOpen(null)}
        />
      )}
      {live === 'reconnecting' && (
        <ConnectionLost what="Widgets update again once it is back." onRetry={() => conn?.retryNow()} />
      )}
      <p role="status" className="muted dash-template-notice">
        {notice}
      </p>
      {moveError && (
        <p role="alert" className="error">
          {moveError}
        </p>
      )}
      {layout.shown.length === 0 && <p className="muted">This dashboard has no widgets yet.</p>}
      <div className="dash-grid" ref={gridRef}>
        {layout.shown.map((w) => (
          <WidgetCard
            key={w.id}
            widget={w}
            data={results[w.id]}
            dragging={layout.draggingId === w.id}
            drill={drillOf(w.query.params, range, nowMs)}
            editing={editingOf(widgets.find((x) => x.id === w.id) ?? w)}
          />
        ))}
      </div>
      {open?.kind === 'edit' && open.widget.query.type === 'Metric' && (
        <MetricWidgetDialog
          widget={open.widget}
          onSave={(changes) => saveWidget(open.widget, changes)}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === 'edit' && open.widget.query.type !== 'Metric' && (
        <WidgetDialog
          widget={open.widget}
          onSave={(changes) => saveWidget(open.widget, changes)}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === 'remove' && (
        <ConfirmDialog
          label={`Remove “${open.widget.title}”?`}
          confirm="Remove"
          onConfirm={() => remove(open.widget)}
          onClose={() => setOpen(null)}
        >
          <p>
            {open.widget.dashboards.length > 1
              ? 'It stays on the other dashboards it is on.'
              : 'It is on no other dashboard, so it is deleted.'}
          </p>
        </ConfirmDialog>
      )}
      {open?.kind === 'rename' && (
        <RenameDialog
          title={head.title}
          description={head.description}
          onSave={rename}
          onClose={() => setOpen(null)}
        />
      )}
      {open?.kind === 'delete' && (
        <ConfirmDialog
          label={`Delete “${head.title}”?`}
          confirm="Delete dashboard"
          onConfirm={deleteDashboard}
          onClose={() => setOpen(null)}
        >
          <p>
            {`It is deleted for everyone who sees it${
              onlyHere > 0
                ? `, with the ${onlyHere} widget${onlyHere === 1 ? '' : 's'} on no other dashboard`
                : ''
            }. This cannot be undone.`}
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
