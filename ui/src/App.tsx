import { useCallback, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import { api, getToken, setToken, setUnauthorizedHandler, subscribeToken } from './api';
import { DashboardsPage } from './pages/dashboards/DashboardsList';
import { DashboardRoute } from './pages/dashboards/DashboardView';
import { LogMetricsPage } from './pages/log-metrics/LogMetricsPage';
import { MetricRoute } from './pages/log-metrics/MetricPage';
import { LoginPage } from './pages/login/Login';
import { ReportsPage } from './pages/reports/ReportsPage';
import { SchedulesPage } from './pages/schedules/SchedulesPage';
import { SearchPage } from './pages/search/Search';
import { SettingsPage } from './pages/settings/Settings';
import { TasksPage } from './pages/tasks/TasksPage';
import { AlertingPage } from './pages/triggers/AlertingPage';
import { TriggersPage } from './pages/triggers/TriggersPage';
import { Link, navigate, safeNext, useLocation } from './router';
import { useMe } from './useMe';

const PAGES = [
  { path: '/search', label: 'Search' },
  { path: '/dashboards', label: 'Dashboards' },
  // Not `/metrics`: that is Prometheus' path for the server's own metrics.
  { path: '/log-metrics', label: 'Metrics' },
  { path: '/tasks', label: 'Tasks' },
  { path: '/triggers', label: 'Triggers' },
  { path: '/alerting', label: 'Alerting' },
  { path: '/reports', label: 'Reports' },
  { path: '/schedules', label: 'Schedules' },
  { path: '/settings', label: 'Settings' },
] as const;

const useToken = () => useSyncExternalStore(subscribeToken, getToken);

export function App() {
  const token = useToken();
  const { path, search, href } = useLocation();
  const hrefRef = useRef(href);
  hrefRef.current = href;

  // Any 401 with a token: the session is over; sign in again (told why) and come back here.
  useEffect(() => {
    setUnauthorizedHandler(() => {
      const here = hrefRef.current;
      setToken(null);
      if (!here.startsWith('/login'))
        navigate(`/login?next=${encodeURIComponent(here)}&reason=expired`, { replace: true });
    });
  }, []);

  const signedOutElsewhere = !token && path !== '/login';
  useEffect(() => {
    if (signedOutElsewhere) navigate(`/login?next=${encodeURIComponent(hrefRef.current)}`, { replace: true });
  }, [signedOutElsewhere]);

  const next = safeNext(search.get('next'));
  useEffect(() => {
    if (token && path === '/login') navigate(next, { replace: true });
    else if (token && path === '/') navigate('/search', { replace: true });
  }, [token, path, next]);

  const page = PAGES.find((p) => p.path === path || path.startsWith(`${p.path}/`));
  useEffect(() => {
    document.title = `${path === '/login' ? 'Sign in' : (page?.label ?? 'Not found')} · Logscope`;
  }, [path, page]);

  if (!token) return <LoginPage />;
  if (path === '/login' || path === '/') return null;
  return <Shell token={token} path={path} />;
}

function Shell({ token, path }: { token: string; path: string }) {
  const [menuOpen, setMenuOpen] = useState(false);
  const menuButton = useRef<HTMLButtonElement>(null);
  const me = useMe();

  const signOut = useCallback(async () => {
    try {
      await api(`/api/authtokens/${encodeURIComponent(token)}`, { method: 'DELETE' });
    } catch {
      // Expired or already deleted: signing out locally is all that is left.
    }
    setToken(null);
    navigate('/login', { replace: true });
  }, [token]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      // Closing the open menu from inside it puts the focus back on its button.
      if (
        menuButton.current?.getAttribute('aria-expanded') === 'true' &&
        document.activeElement?.closest('#main-nav-list')
      )
        menuButton.current.focus();
      setMenuOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  return (
    <div className="app">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/search" className="brand">
          Logscope
        </Link>
        <nav aria-label="Main" className={menuOpen ? 'main-nav open' : 'main-nav'}>
          <button
            ref={menuButton}
            type="button"
            className="menu-button secondary"
            aria-expanded={menuOpen}
            aria-controls="main-nav-list"
            onClick={() => setMenuOpen((o) => !o)}
          >
            Menu
          </button>
          <ul id="main-nav-list">
            {PAGES.map((p) => (
              <li key={p.path}>
                <Link
                  to={p.path}
                  aria-current={p.path === path ? 'page' : undefined}
                  // Its bold twin (hidden, see styles.css) reserves the width of the active look.
                  data-label={p.label}
                  onClick={() => setMenuOpen(false)}
                >
                  {p.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          {me && <span className="username">{me.username}</span>}
          <button type="button" className="secondary" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" className={path === '/search' ? 'main main-search' : 'main'}>
        <Page path={path} />
      </main>
    </div>
  );
}

function Page({ path }: { path: string }) {
  switch (path) {
    case '/search':
      return <SearchPage />;
    case '/dashboards':
      return <DashboardsPage />;
    case '/tasks':
      return <TasksPage />;
    case '/triggers':
      return <TriggersPage />;
    case '/alerting':
      return <AlertingPage />;
    case '/reports':
      return <ReportsPage />;
    case '/schedules':
      return <SchedulesPage />;
    case '/settings':
      return <SettingsPage />;
    case '/log-metrics':
      return <LogMetricsPage />;
    default:
      if (path.startsWith('/dashboards/')) return <DashboardRoute path={path} />;
      if (path.startsWith('/log-metrics/')) return <MetricRoute path={path} />;
      return (
        <div className="page">
          <h1>Page not found</h1>
          <p>
            Nothing lives at <code>{path}</code>. <Link to="/search">Go to Search</Link>.
          </p>
        </div>
      );
  }
}
