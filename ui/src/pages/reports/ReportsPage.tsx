import { type FormEvent, useEffect, useState } from 'react';
import { api, errorText, type Paginated } from '../../api';
import { DEFAULT_PRESET, formatCount, formatIso, TIME_PRESETS } from '../../format';
import { useApi } from '../../useApi';
import { browserTimeZone, downloadFile, FORMATS } from './download';
import '../tasks/work.css';

export interface Report {
  id: number;
  title: string;
  ftype: string;
  status: 'PENDING' | 'READY' | 'ERROR';
  size: number;
  filename: string;
  source: Record<string, unknown>;
  timezone: string;
  created_at: string;
  error: string | null;
}

interface DashboardItem {
  id: number;
  title: string;
}

const POLL_MS = 1500;

export const formatSize = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `/reports`: your reports (refreshed while any is being generated), a new one, downloads. */
export function ReportsPage() {
  const list = useApi<Paginated<Report>>('/api/reports?page_size=200&ordering=-id');
  const [notice, setNotice] = useState('');
  const [error, setError] = useState<string | null>(null);
  const { reload } = list;

  const pending = list.data?.results.some((r) => r.status === 'PENDING') ?? false;
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [pending, reload]);

  const download = async (r: Report) => {
    setError(null);
    try {
      const name = await downloadFile(`/api/reports/${r.id}/file`, r.filename);
      setNotice(`Downloaded ${name}.`);
    } catch (err) {
      setError(errorText(err));
    }
  };

  const remove = async (r: Report) => {
    if (!window.confirm(`Delete the report “${r.title}”?`)) return;
    setError(null);
    try {
      await api(`/api/reports/${r.id}`, { method: 'DELETE' });
      setNotice(`Deleted “${r.title}”.`);
      reload();
    } catch (err) {
      setError(errorText(err));
    }
  };

  const data = list.data;
  return (
    <div className="page work-page">
      <h1>Reports</h1>
      <NewReport
        onCreated={(r) => {
          setNotice(`Generating “${r.title}”…`);
          reload();
        }}
      />
      <p role="status" className="muted work-notice">
        {notice}
      </p>
      {(error ?? list.error) && (
        <p role="alert" className="error">
          {error ?? list.error}
        </p>
      )}
      {!data && !list.error && <p className="muted">Loading…</p>}
      {data && data.results.length === 0 && <p className="muted">No reports yet.</p>}
      {data && data.results.length > 0 && (
        <>
          <p className="muted">
            {formatCount(data.count)} {data.count === 1 ? 'report' : 'reports'}
          </p>
          <div className="table-wrap">
            <table className="list work-table">
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Format</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="wide-only">
                    Size
                  </th>
                  <th scope="col" className="wide-only">
                    Created
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.results.map((r) => (
                  <tr key={r.id}>
                    <td>{r.title}</td>
                    <td>{r.ftype}</td>
                    <td>
                      <span className={`status-badge status-${r.status}`}>{r.status}</span>
                      {r.error && <span className="error-text"> {r.error}</span>}
                    </td>
                    <td className="wide-only">{r.status === 'READY' ? formatSize(r.size) : ''}</td>
                    <td className="wide-only">{formatIso(r.created_at)}</td>
                    <td className="actions-cell">
                      <div className="row-actions">
                        {r.status === 'READY' && (
                          <button
                            type="button"
                            className="small"
                            aria-label={`Download “${r.title}”`}
                            onClick={() => download(r)}
                          >
                            Download
                          </button>
                        )}
                        <button
                          type="button"
                          className="secondary small"
                          aria-label={`Delete “${r.title}”`}
                          onClick={() => remove(r)}
                        >
                          Delete
                        </button>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </div>
  );
}

function NewReport({ onCreated }: { onCreated: (r: Report) => void }) {
  const dashboards = useApi<Paginated<DashboardItem>>('/api/dashboards?page_size=200&ordering=title');
  const [kind, setKind] = useState<'query' | 'dashboard'>('query');
  const [query, setQuery] = useState('');
  const [range, setRange] = useState(DEFAULT_PRESET);
  const [dashboard, setDashboard] = useState('');
  const [ftype, setFtype] = useState('pdf');
  const [timezone, setTimezone] = useState(browserTimeZone);
  const [title, setTitle] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const boards = dashboards.data?.results ?? [];
  const chosen = dashboard || (boards[0] ? String(boards[0].id) : '');

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const source =
        kind === 'query'
          ? {
              kind: 'query',
              query: { type: 'Search', params: { query, time_range: { preset: range }, sort: ['-ts'] } },
            }
          : { kind: 'dashboard', dashboard_id: Number(chosen) };
      const r = await api<Report>('/api/reports', {
        body: {
          ftype,
          source,
          timezone: timezone.trim() || 'UTC',
          ...(title.trim() ? { title: title.trim() } : {}),
        },
      });
      setTitle('');
      onCreated(r);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="work-form" aria-labelledby="new-report-title" onSubmit={submit}>
      <h2 id="new-report-title">New report</h2>
      <fieldset>
        <legend>Source</legend>
        <label>
          <input
            type="radio"
            name="report-source"
            checked={kind === 'query'}
            onChange={() => setKind('query')}
          />
          Query
        </label>
        <label>
          <input
            type="radio"
            name="report-source"
            checked={kind === 'dashboard'}
            onChange={() => setKind('dashboard')}
          />
          Dashboard
        </label>
      </fieldset>
      {kind === 'query' ? (
        <>
          <div className="field grow">
            <label htmlFor="report-query">Query</label>
            <input
              id="report-query"
              className="mono"
              spellCheck={false}
              autoComplete="off"
              placeholder="Everything"
              value={query}
              onChange={(e) => setQuery(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="report-range">Time range</label>
            <select id="report-range" value={range} onChange={(e) => setRange(e.target.value)}>
              {TIME_PRESETS.map((p) => (
                <option key={p.value} value={p.value}>
                  {p.label}
                </option>
              ))}
            </select>
          </div>
        </>
      ) : (
        <div className="field grow">
          <label htmlFor="report-dashboard">Dashboard</label>
          <select
            id="report-dashboard"
            value={chosen}
            disabled={boards.length === 0}
            onChange={(e) => setDashboard(e.target.value)}
          >
            {boards.length === 0 && <option value="">No dashboards</option>}
            {boards.map((d) => (
              <option key={d.id} value={d.id}>
                {d.title}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="field">
        <label htmlFor="report-format">Format</label>
        <select id="report-format" value={ftype} onChange={(e) => setFtype(e.target.value)}>
          {FORMATS.map((f) => (
            <option key={f.ftype} value={f.ftype}>
              {f.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="report-timezone">Time zone</label>
        <input
          id="report-timezone"
          autoComplete="off"
          spellCheck={false}
          value={timezone}
          onChange={(e) => setTimezone(e.target.value)}
        />
      </div>
      <div className="field">
        <label htmlFor="report-name">Title (optional)</label>
        <input id="report-name" maxLength={200} value={title} onChange={(e) => setTitle(e.target.value)} />
      </div>
      <button type="submit" disabled={busy || (kind === 'dashboard' && !chosen)}>
        Create report
      </button>
      {error && (
        <p role="alert" className="error form-error">
          {error}
        </p>
      )}
    </form>
  );
}
