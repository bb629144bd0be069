import { type FormEvent, useState } from 'react';
import { ApiError, type AuthToken, api, errorText, setToken } from '../api';
import { useLocation } from '../router';

/**
 * Sign-in: `POST /api/auth/login` gives a USER token that expires (a session). Reached
 * because the server refused the session (`reason=expired`), it says so; after signing in
 * the app goes back to `next`.
 */
export function LoginPage() {
  const expired = useLocation().search.get('reason') === 'expired';
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const t = await api<AuthToken>('/api/auth/login', { body: { username, password }, auth: false });
      setToken(t.secret_key);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401 ? 'Wrong username or password.' : errorText(err),
      );
      setBusy(false);
    }
  };

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit}>
        <h1>Logscope</h1>
        {expired ? (
          <p role="status" className="notice">
            Your session has ended. Sign in again to go back to where you were.
          </p>
        ) : (
          <p className="muted">Sign in to search your logs.</p>
        )}
        <label htmlFor="login-username">Username</label>
        <input
          id="login-username"
          name="username"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          required
          value={username}
          onChange={(e) => setUsername(e.target.value)}
        />
        <label htmlFor="login-password">Password</label>
        <input
          id="login-password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
