import { type FormEvent, useState } from 'react';
import { type AuthToken, api, errorText, getToken, type Paginated } from '../api';
import { formatCount, formatIso } from '../format';
import { useApi } from '../useApi';

/** Settings, for now: the caller's API tokens (list, create with the secret shown once, revoke). */
export function SettingsPage() {
  const { data, error, loading, reload } = useApi<Paginated<AuthToken>>('/api/authtokens?page_size=1000');
  const [name, setName] = useState('');
  const [type, setType] = useState<'USER' | 'INGEST'>('INGEST');
  const [created, setCreated] = useState<AuthToken | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);
  const sessionKeyId = (getToken() ?? '').split('_')[0];

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setActionError(null);
    setCopied(false);
    try {
      const body: { token_type: string; name?: string } = { token_type: type };
      if (name.trim()) body.name = name.trim();
      const t = await api<AuthToken>('/api/authtokens', { body });
      setCreated(t);
      setName('');
      reload();
    } catch (err) {
      setActionError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (t: AuthToken) => {
    if (!window.confirm(`Revoke the token "${t.name || t.key_id}"? Clients using it stop working.`)) return;
    setActionError(null);
    try {
      await api(`/api/authtokens/${encodeURIComponent(t.key_id)}`, { method: 'DELETE' });
      if (created?.key_id === t.key_id) setCreated(null);
      reload();
    } catch (err) {
      setActionError(errorText(err));
    }
  };

  const copy = async () => {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.secret_key);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  };

  return (
    <div className="page">
      <h1>Settings</h1>
      <section aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">API tokens</h2>
        <p className="muted">
          USER tokens act as you; INGEST tokens may only send events. Send one as{' '}
          <code>Authorization: token &lt;key&gt;</code>.
        </p>
        <form className="inline-form" onSubmit={create}>
          <div className="field">
            <label htmlFor="token-name">Token name</label>
            <input
              id="token-name"
              value={name}
              maxLength={200}
              placeholder="e.g. web-1 shipper"
              onChange={(e) => setName(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="token-type">Token type</label>
            <select
              id="token-type"
              value={type}
              onChange={(e) => setType(e.target.value === 'USER' ? 'USER' : 'INGEST')}
            >
              <option value="INGEST">INGEST</option>
              <option value="USER">USER</option>
            </select>
          </div>
          <button type="submit" disabled={busy}>
            Create token
          </button>
        </form>
        {actionError && (
          <p role="alert" className="error">
            {actionError}
          </p>
        )}
        {created && (
          <div className="secret" role="status">
            <p>
              <strong>New token “{created.name || created.key_id}”.</strong> Copy it now: it is not shown
              again.
            </p>
            <div className="secret-row">
              <input
                aria-label="New token secret"
                readOnly
                value={created.secret_key}
                onFocus={(e) => e.currentTarget.select()}
              />
              <button type="button" className="secondary" onClick={copy}>
                {copied ? 'Copied' : 'Copy'}
              </button>
              <button type="button" className="secondary" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          </div>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {loading && !data && <p className="muted">Loading…</p>}
        {data && (
          <>
            <p className="muted">{formatCount(data.count)} active tokens</p>
            <div className="table-wrap">
              <table className="list">
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Type</th>
                    <th scope="col">Key</th>
                    <th scope="col" className="wide-only">
                      Created
                    </th>
                    <th scope="col" className="wide-only">
                      Expires
                    </th>
                    <th scope="col" className="wide-only">
                      Last used
                    </th>
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.results.map((t) => (
                    <tr key={t.key_id}>
                      <td>{t.name || <span className="muted">(no name)</span>}</td>
                      <td>{t.token_type}</td>
                      <td>
                        <code>{t.secret_key}</code>
                      </td>
                      <td className="wide-only">{formatIso(t.created_at)}</td>
                      <td className="wide-only">{t.expires_at ? formatIso(t.expires_at) : 'Never'}</td>
                      <td className="wide-only">{t.last_used_at ? formatIso(t.last_used_at) : 'Never'}</td>
                      <td>
                        {t.key_id === sessionKeyId ? (
                          <span className="muted">This session</span>
                        ) : (
                          <button
                            type="button"
                            className="secondary small"
                            aria-label={`Revoke ${t.name || t.key_id}`}
                            onClick={() => revoke(t)}
                          >
                            Revoke
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </>
        )}
      </section>
    </div>
  );
}
