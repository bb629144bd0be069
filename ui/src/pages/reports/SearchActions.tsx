import { type FormEvent, type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { api, errorText, type Paginated } from '../../api';
import { Link } from '../../router';
import { useApi } from '../../useApi';
import { browserTimeZone, downloadFile, FORMATS } from './download';
import type { Report } from './ReportsPage';
import '../tasks/work.css';

/** What the search page shows: the query, its pinned window and the preset it came from. */
export interface ShownSearch {
  /** The finished (or stopped) Search's id, null while none. */
  qid: string | null;
  query: string;
  window: { ts_from: number; ts_to: number } | null;
  preset: string;
}

const describe = (query: string) => (query.trim() ? query.trim().slice(0, 150) : 'All events');

/**
 * The search page's actions on its results: Export (a file of the Search now, or a report
 * generated in the background) and Add to dashboard (a Search table widget).
 */
export function SearchActions(props: ShownSearch) {
  const [menu, setMenu] = useState(false);
  const [dialog, setDialog] = useState<'report' | 'dashboard' | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const wrap = useRef<HTMLDivElement>(null);
  const menuId = useId();

  useEffect(() => {
    if (!menu) return;
    const onDown = (e: PointerEvent) => {
      if (!wrap.current?.contains(e.target as Node)) setMenu(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setMenu(false);
        wrap.current?.querySelector<HTMLButtonElement>('button[aria-expanded]')?.focus();
      }
    };
    document.addEventListener('pointerdown', onDown);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onDown);
      document.removeEventListener('keydown', onKey);
    };
  }, [menu]);

  const exportAs = async (ftype: string) => {
    setMenu(false);
    if (!props.qid) return;
    setBusy(true);
    setError(null);
    try {
      const qs = new URLSearchParams({ ftype, timezone: browserTimeZone() });
      await downloadFile(`/api/query/${encodeURIComponent(props.qid)}/export?${qs}`, `search.${ftype}`);
    } catch (err) {
      setError(`Export failed: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="search-actions" ref={wrap}>
      {error && (
        <span role="alert" className="error small-text">
          {error}
        </span>
      )}
      <button
        type="button"
        className="secondary small"
        aria-expanded={menu}
        aria-controls={menu ? menuId : undefined}
        disabled={busy}
        onClick={() => setMenu((m) => !m)}
      >
        {busy ? 'Exporting…' : 'Export'}
      </button>
      {menu && (
        <ul className="export-menu" id={menuId} aria-label="Export">
          {FORMATS.map((f) => (
            <li key={f.ftype}>
              <button type="button" disabled={!props.qid} onClick={() => exportAs(f.ftype)}>
                {f.label}
              </button>
            </li>
          ))}
          <li aria-hidden="true">
            <hr />
          </li>
          <li>
            <button
              type="button"
              onClick={() => {
                setMenu(false);
                setDialog('report');
              }}
            >
              Report…
            </button>
          </li>
        </ul>
      )}
      <button type="button" className="secondary small" onClick={() => setDialog('dashboard')}>
        Add to dashboard
      </button>
      {dialog === 'report' && <ReportDialog {...props} onClose={() => setDialog(null)} />}
      {dialog === 'dashboard' && <DashboardDialog {...props} onClose={() => setDialog(null)} />}
    </div>
  );
}

function Dialog(props: { label: string; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog ref={ref} aria-label={props.label} className="work-dialog" onClose={props.onClose}>
      {props.children}
    </dialog>
  );
}

function ReportDialog(props: ShownSearch & { onClose: () => void }) {
  const [ftype, setFtype] = useState('pdf');
  const [title, setTitle] = useState(() => `Search: ${describe(props.query)}`.slice(0, 200));
  const [timezone, setTimezone] = useState(browserTimeZone);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [made, setMade] = useState<Report | null>(null);
  const ids = useId();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await api<Report>('/api/reports', {
        body: {
          ftype,
          title: title.trim() || undefined,
          timezone: timezone.trim() || 'UTC',
          source: {
            kind: 'query',
            query: {
              type: 'Search',
              params: {
                query: props.query,
                time_range: props.window ?? { preset: props.preset },
                sort: ['-ts'],
              },
            },
          },
        },
      });
      setMade(r);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog label="Report" onClose={props.onClose}>
      <form onSubmit={submit}>
        <h2>Report of this search</h2>
        <p className="muted">
          Generated in the background from <code>{describe(props.query)}</code> over the searched time range.
        </p>
        <div className="field">
          <label htmlFor={`${ids}-format`}>Format</label>
          <select id={`${ids}-format`} value={ftype} onChange={(e) => setFtype(e.target.value)}>
            {FORMATS.map((f) => (
              <option key={f.ftype} value={f.ftype}>
                {f.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${ids}-title`}>Title</label>
          <input
            id={`${ids}-title`}
            maxLength={200}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor={`${ids}-tz`}>Time zone</label>
          <input id={`${ids}-tz`} value={timezone} onChange={(e) => setTimezone(e.target.value)} />
        </div>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <p role="status">
          {made && (
            <>
              Generating “{made.title}”. <Link to="/reports">Open Reports</Link> to download it.
            </>
          )}
        </p>
        <div className="dialog-buttons">
          <button type="button" className="secondary" onClick={props.onClose}>
            {made ? 'Close' : 'Cancel'}
          </button>
          {!made && (
            <button type="submit" disabled={busy}>
              Create report
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}

interface DashboardItem {
  id: number;
  title: string;
}

function DashboardDialog(props: ShownSearch & { onClose: () => void }) {
  const list = useApi<Paginated<DashboardItem>>('/api/dashboards?page_size=200&ordering=title');
  const [picked, setPicked] = useState('');
  const [title, setTitle] = useState(() => describe(props.query).slice(0, 200));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [added, setAdded] = useState<{ dashboard: DashboardItem; title: string } | null>(null);
  const ids = useId();

  const boards = list.data?.results ?? [];
  const chosen = picked || (boards[0] ? String(boards[0].id) : '');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const dashboard = boards.find((d) => String(d.id) === chosen);
    if (!dashboard) return;
    setBusy(true);
    setError(null);
    try {
      const w = await api<{ id: number; title: string }>(`/api/dashboards/${dashboard.id}/widgets`, {
        body: {
          title: title.trim() || 'Search',
          query: {
            type: 'Search',
            params: {
              query: props.query,
              time_range: { preset: props.preset },
              sort: ['-ts'],
              page_size: 50,
            },
          },
          visualization: { kind: 'table', options: {} },
        },
      });
      setAdded({ dashboard, title: w.title });
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog label="Add to dashboard" onClose={props.onClose}>
      <form onSubmit={submit}>
        <h2>Add to dashboard</h2>
        <p className="muted">
          A table of the newest events of <code>{describe(props.query)}</code>, following the time range
          preset.
        </p>
        {list.data && boards.length === 0 ? (
          <p>
            You have no dashboards yet. <Link to="/dashboards">Create one</Link> first.
          </p>
        ) : (
          <div className="field">
            <label htmlFor={`${ids}-dashboard`}>Dashboard</label>
            <select id={`${ids}-dashboard`} value={chosen} onChange={(e) => setPicked(e.target.value)}>
              {boards.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.title}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor={`${ids}-title`}>Widget title</label>
          <input
            id={`${ids}-title`}
            required
            maxLength={200}
            value={title}
            onChange={(e) => setTitle(e.target.value)}
          />
        </div>
        {(error ?? list.error) && (
          <p role="alert" className="error">
            {error ?? list.error}
          </p>
        )}
        <p role="status">
          {added && (
            <>
              Added “{added.title}” to{' '}
              <Link to={`/dashboards/${added.dashboard.id}`}>{added.dashboard.title}</Link>.
            </>
          )}
        </p>
        <div className="dialog-buttons">
          <button type="button" className="secondary" onClick={props.onClose}>
            {added ? 'Close' : 'Cancel'}
          </button>
          {!added && (
            <button type="submit" disabled={busy || !chosen}>
              Add widget
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
