import { type FormEvent, useEffect, useState } from 'react';
import { type AuthToken, api, errorText, getToken, isAbort, type Paginated, type User } from '../api';
import { formatCount, formatIso } from '../format';
import { useApi } from '../useApi';

/** The permissions a user can hold besides admin (src/domain/auth/identity.ts). */
const PERMISSIONS = [
  'manage_dashboards',
  'manage_widgets',
  'manage_tasks',
  'manage_tokens',
  'manage_triggers',
] as const;

/** Settings: the caller's API tokens (list, create with the secret shown once, revoke); for admins, users. */
export function SettingsPage() {
  const [me, setMe] = useState<User | null>(null);
  useEffect(() => {
    const ctl = new AbortController();
    api<User>('/api/users/me', { signal: ctl.signal })
      .then(setMe)
      .catch((err) => {
        if (!isAbort(err)) setMe(null);
      });
    return () => ctl.abort();
  }, []);
  return (
    <div className="page">
      <h1>Settings</h1>
      <TokensSection />
      {me?.is_admin && <UsersSection />}
    </div>
  );
}

function TokensSection() {
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
            <strong>New token “{created.name || created.key_id}”.</strong> Copy it now: it is not shown again.
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
  );
}

/** Admins: the users (GET /api/users) and a form for a new one (POST /api/users). */
function UsersSection() {
  const { data, error, loading, reload } = useApi<Paginated<User>>(
    '/api/users?page_size=1000&ordering=username',
  );
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [isAdmin, setIsAdmin] = useState(false);
  const [perms, setPerms] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const [created, setCreated] = useState<string | null>(null);

  const create = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setActionError(null);
    setCreated(null);
    try {
      const body: { username: string; password?: string; is_admin: boolean; permissions: string[] } = {
        username: username.trim(),
        is_admin: isAdmin,
        permissions: PERMISSIONS.filter((p) => perms.has(p)),
      };
      if (password) body.password = password;
      const u = await api<User>('/api/users', { body });
      setCreated(u.username);
      setUsername('');
      setPassword('');
      setIsAdmin(false);
      setPerms(new Set());
      reload();
    } catch (err) {
      setActionError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const togglePerm = (p: string, on: boolean) =>
    setPerms((prev) => {
      const next = new Set(prev);
      if (on) next.add(p);
      else next.delete(p);
      return next;
    });

  return (
    <section aria-labelledby="users-heading">
      <h2 id="users-heading">Users</h2>
      <form className="user-form" aria-labelledby="new-user-heading" onSubmit={create}>
        <h3 id="new-user-heading">New user</h3>
        <div className="inline-form">
          <div className="field">
            <label htmlFor="user-name">Username</label>
            <input
              id="user-name"
              required
              maxLength={150}
              autoComplete="off"
              autoCapitalize="none"
              spellCheck={false}
              value={username}
              onChange={(e) => setUsername(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="user-password">Password</label>
            <input
              id="user-password"
              type="password"
              autoComplete="new-password"
              aria-describedby="user-password-hint"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </div>
          <label className="check">
            <input type="checkbox" checked={isAdmin} onChange={(e) => setIsAdmin(e.target.checked)} />
            Admin
          </label>
        </div>
        <p id="user-password-hint" className="muted small-text form-hint">
          Passwords have 8 or more characters; a user without one signs in with tokens only.
        </p>
        <fieldset className="perm-list">
          <legend>Permissions</legend>
          {PERMISSIONS.map((p) => (
            <label key={p} className="check">
              <input
                type="checkbox"
                checked={perms.has(p)}
                onChange={(e) => togglePerm(p, e.target.checked)}
              />
              {p}
            </label>
          ))}
        </fieldset>
        <button type="submit" disabled={busy}>
          Create user
        </button>
      </form>
      {actionError && (
        <p role="alert" className="error">
          {actionError}
        </p>
      )}
      {created && (
        <p role="status" className="muted">
          Created user “{created}”.
        </p>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {loading && !data && <p className="muted">Loading…</p>}
      {data && (
        <>
          <p className="muted">{formatCount(data.count)} users</p>
          <div className="table-wrap">
            <table className="list">
              <thead>
                <tr>
                  <th scope="col">Username</th>
                  <th scope="col">Admin</th>
                  <th scope="col">Permissions</th>
                  <th scope="col" className="wide-only">
                    Created
                  </th>
                </tr>
              </thead>
              <tbody>
                {data.results.map((u) => (
                  <tr key={u.id}>
                    <td>{u.username}</td>
                    <td>{u.is_admin ? 'Yes' : 'No'}</td>
                    <td>
                      {u.permissions.length > 0 ? (
                        u.permissions.join(', ')
                      ) : (
                        <span className="muted">none</span>
                      )}
                    </td>
                    <td className="wide-only">
                      {formatIso((u as User & { created_at?: string }).created_at)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
