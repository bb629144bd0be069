import { type FormEvent, useState } from 'react';
import { ApiError, type AuthToken, api, errorText, setToken } from '../api';

/** Sign-in: `POST /api/auth/login` gives a USER token that expires (a session). */
export function LoginPage() {
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
        <p className="muted">Sign in to search your logs.</p>
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
