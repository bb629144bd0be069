import { type FormEvent, useEffect, useState } from 'react';
import { type Answer, ApiError, type AuthToken, api, errorText, setToken } from '../../api';
import { safeNext, useLocation } from '../../router';

type Methods = Answer<'/api/auth/methods'>;

const SSO_ERRORS: Record<string, string> = {
  unavailable:
    'The sign-in provider does not answer right now. Try again in a moment, or ask an administrator.',
};

/**
 * Sign-in: with the OpenID provider's button when single sign-on is set up (it returns
 * here with `sso=done`, and the session token is taken by one POST, never from the
 * address), and with a password (`POST /api/auth/login`) unless password sign-in is off
 * (then behind "Use a local account", for break-glass accounts). Reached because the server
 * refused the session (`reason=expired`), it says so; after signing in the app goes back to
 * `next`.
 */
export function LoginPage() {
  const { search } = useLocation();
  const expired = search.get('reason') === 'expired';
  const ssoDone = search.get('sso') === 'done';
  const ssoError = search.get('sso_error');
  const next = safeNext(search.get('next'));
  const [methods, setMethods] = useState<Methods | null>(null);
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(
    ssoError ? (SSO_ERRORS[ssoError] ?? 'Signing in with the provider failed.') : null,
  );
  const [busy, setBusy] = useState(ssoDone);

  useEffect(() => {
    api<Methods>('/api/auth/methods', { auth: false })
      .then(setMethods)
      .catch(() => setMethods({ password: true, oidc: null, public_url: null }));
  }, []);

  // Back from the provider: the token the callback left for this page, taken once.
  useEffect(() => {
    if (!ssoDone) return;
    api<AuthToken>('/api/auth/oidc/session', { method: 'POST', auth: false })
      .then((t) => setToken(t.secret_key))
      .catch((err) => {
        setError(errorText(err));
        setBusy(false);
      });
  }, [ssoDone]);

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

  const passwordFields = (
    <>
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
      <button type="submit" className={methods?.oidc ? 'secondary' : undefined} disabled={busy}>
        Sign in
      </button>
    </>
  );

  return (
    <main className="login">
      <form className="login-card" onSubmit={submit}>
        <h1>Logscope</h1>
        {expired ? (
          <p role="status" className="notice">
            Your session has ended. Sign in again to go back to where you were.
          </p>
        ) : ssoDone && !error ? (
          <p role="status" className="muted">
            Signing you in…
          </p>
        ) : (
          <p className="muted">Sign in to search your logs.</p>
        )}
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {methods?.oidc && (
          <a className="sso-button" href={`/api/auth/oidc/login?next=${encodeURIComponent(next)}`}>
            {methods.oidc.label}
          </a>
        )}
        {methods &&
          (methods.password || !methods.oidc ? (
            <>
              {methods.oidc && <p className="login-or muted">or with a password</p>}
              {passwordFields}
            </>
          ) : (
            <details className="login-local">
              <summary>Use a local account</summary>
              <p className="muted small-text">
                For the accounts an administrator allowed to sign in with a password.
              </p>
              {passwordFields}
            </details>
          ))}
      </form>
    </main>
  );
}
