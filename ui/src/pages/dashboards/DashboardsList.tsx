import { type FormEvent, useState } from 'react';
import { api, errorText, type Paginated } from '../../api';
import { formatCount, formatIso } from '../../format';
import { Link, navigate } from '../../router';
import { useApi } from '../../useApi';
import type { Dashboard } from './DashboardView';
import './dashboards.css';

interface Template {
  path: string;
  title: string;
  builtin: boolean;
}

/** `/dashboards`: the caller's dashboards, a new one (empty or from a template), clones. */
export function DashboardsPage() {
  const list = useApi<Paginated<Dashboard>>('/api/dashboards?page_size=200');
  const templates = useApi<Paginated<Template>>('/api/dashboards/templates?page_size=200');
  const [title, setTitle] = useState('');
  const [template, setTemplate] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState('');

  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await what();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const create = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const d = await api<Dashboard>('/api/dashboards', { body: { title } });
      navigate(`/dashboards/${d.id}`);
    });
  };

  const chosen = template || templates.data?.results[0]?.path || '';
  const fromTemplate = (e: FormEvent) => {
    e.preventDefault();
    const path = chosen;
    if (!path) return;
    void run(async () => {
      const d = await api<Dashboard>('/api/dashboards', { body: { template: path } });
      navigate(`/dashboards/${d.id}`);
    });
  };

  const clone = (d: Dashboard) =>
    run(async () => {
      const c = await api<Dashboard>(`/api/dashboards?source_id=${d.id}`, { method: 'POST', body: {} });
      setNotice(`Created “${c.title}”.`);
      list.reload();
    });

  const data = list.data;
  return (
    <div className="page">
      <h1>Dashboards</h1>
      <div className="dash-create">
        <form className="inline-form" onSubmit={create} aria-labelledby="new-dashboard-heading">
          <h2 id="new-dashboard-heading" className="dash-form-title">
            New dashboard
          </h2>
          <div className="field">
            <label htmlFor="new-dashboard-title">Title</label>
            <input
              id="new-dashboard-title"
              value={title}
              onChange={(e) => setTitle(e.target.value)}
              required
              maxLength={200}
            />
          </div>
          <button type="submit" disabled={busy}>
            Create
          </button>
        </form>
        <form className="inline-form" onSubmit={fromTemplate} aria-labelledby="from-template-heading">
          <h2 id="from-template-heading" className="dash-form-title">
            From template
          </h2>
          <div className="field">
            <label htmlFor="new-dashboard-template">Template</label>
            <select id="new-dashboard-template" value={chosen} onChange={(e) => setTemplate(e.target.value)}>
              {(templates.data?.results ?? []).map((t) => (
                <option key={t.path} value={t.path}>
                  {`${t.title} (${t.builtin ? 'built-in' : t.path})`}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" disabled={busy || !templates.data?.results.length}>
            Create from template
          </button>
        </form>
      </div>
      {(error ?? list.error ?? templates.error) && (
        <p role="alert" className="error">
          {error ?? list.error ?? templates.error}
        </p>
      )}
      <p role="status" className="muted">
        {notice}
      </p>
      {list.loading && !data && <p className="muted">Loading…</p>}
      {data && data.results.length === 0 && <p className="muted">No dashboards yet.</p>}
      {data && data.results.length > 0 && (
        <>
          <p className="muted">
            {formatCount(data.count)} dashboards
            {data.count > data.results.length
              ? ` (showing the first ${formatCount(data.results.length)})`
              : ''}
          </p>
          <div className="table-wrap">
            <table className="list">
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col" className="wide-only">
                    Description
                  </th>
                  <th scope="col">Widgets</th>
                  <th scope="col" className="wide-only">
                    Updated
                  </th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.results.map((d) => (
                  <tr key={d.id}>
                    <td>
                      <Link to={`/dashboards/${d.id}`}>{d.title}</Link>
                    </td>
                    <td className="wide-only">{d.description}</td>
                    <td>{Array.isArray(d.widgets) ? d.widgets.length : ''}</td>
                    <td className="wide-only">{formatIso(d.updated_at)}</td>
                    <td>
                      <button
                        type="button"
                        className="secondary small"
                        aria-label={`Clone ${d.title}`}
                        disabled={busy}
                        onClick={() => void clone(d)}
                      >
                        Clone
                      </button>
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
