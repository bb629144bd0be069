/**
 * Realistic sample events for `logscope demo` and the benchmarks: web access logs, auth
 * logs, firewall logs and application errors. Deterministic for a given seed, cheap
 * enough to generate millions a second.
 */

/** mulberry32: a tiny, fast, seedable PRNG (statistical quality is plenty here). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PATHS = [
  '/',
  '/index.html',
  '/login',
  '/logout',
  '/api/v1/orders',
  '/api/v1/users',
  '/api/v1/search',
  '/api/v1/cart',
  '/static/app.js',
  '/static/app.css',
  '/img/logo.png',
  '/favicon.ico',
  '/admin',
  '/wp-login.php',
  '/.env',
  '/health',
];
const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE'];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64) Firefox/132.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/131.0',
  'curl/8.5.0',
  'Googlebot/2.1 (+http://www.google.com/bot.html)',
  'python-requests/2.32.3',
];
const USERS = [
  'alice',
  'bob',
  'carol',
  'dave',
  'erin',
  'frank',
  'grace',
  'heidi',
  'ivan',
  'judy',
  'mallory',
  'root',
  'admin',
  'oracle',
  'test',
];
const APPS = ['checkout', 'inventory', 'payments', 'search', 'notifications'];
const ERRORS = [
  'NullPointerException in OrderService.process',
  'Timeout after 30000 ms calling payments-gateway',
  'Connection refused: redis://cache-1:6379',
  'Deadlock detected while updating table orders',
  'Failed to parse response from upstream: unexpected token < at position 0',
  'Out of memory: heap limit reached',
  'Certificate verify failed for api.partner.example',
];
// Public addresses from well-known networks so GeoIP has something to say.
const PUBLIC_NETS = [
  '81.2.69',
  '89.160.20',
  '175.16.199',
  '216.160.83',
  '2.125.160',
  '202.196.224',
  '67.43.156',
  '149.101.100',
  '12.81.92',
  '5.39.126',
];

export type DemoRecord = Record<string, unknown>;

export interface DemoGenerator {
  /** One record at the given time (Unix ms). */
  next(tsMs: number): DemoRecord;
}

export function demoGenerator(seed = 1): DemoGenerator {
  const r = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  // Skewed choice: low indexes far more often (realistic top-N shapes).
  const skew = <T>(list: readonly T[]): T => list[Math.floor(r() * r() * list.length)] as T;
  const clientIp = () =>
    r() < 0.7
      ? `${skew(PUBLIC_NETS)}.${1 + Math.floor(r() * r() * 254)}`
      : `10.${Math.floor(r() * 4)}.${Math.floor(r() * 256)}.${1 + Math.floor(r() * 254)}`;
  const iso = (ms: number) => new Date(ms).toISOString();

  const web = (ts: number): DemoRecord => {
    const path = skew(PATHS);
    const method = pick(METHODS);
    const roll = r();
    const status =
      path === '/.env' || path === '/wp-login.php'
        ? 404
        : roll < 0.9
          ? 200
          : roll < 0.95
            ? 304
            : roll < 0.98
              ? 404
              : 500;
    const bytes = status === 304 ? 0 : Math.floor(200 + r() * r() * 90_000);
    const ip = clientIp();
    return {
      '@timestamp': iso(ts),
      host: `web-${1 + Math.floor(r() * 4)}`,
      app: 'nginx',
      level: status >= 500 ? 'error' : status >= 400 ? 'warning' : 'info',
      message: `${ip} - - "${method} ${path} HTTP/1.1" ${status} ${bytes}`,
      src_ip: ip,
      status,
      bytes,
      http: { method, duration_ms: Math.floor(1 + r() * r() * 2000) },
      url: { path },
      user_agent: pick(AGENTS),
    };
  };

  const auth = (ts: number): DemoRecord => {
    const user = skew(USERS);
    const fail =
      r() < (user === 'root' || user === 'admin' || user === 'oracle' || user === 'test' ? 0.9 : 0.15);
    const ip = clientIp();
    const port = 30_000 + Math.floor(r() * 35_000);
    return {
      timestamp: iso(ts),
      hostname: `bastion-${1 + Math.floor(r() * 2)}`,
      program: 'sshd',
      severity: fail ? 'warning' : 'info',
      facility: 'auth',
      message: fail
        ? `Failed password for ${user === 'oracle' || user === 'test' ? 'invalid user ' : ''}${user} from ${ip} port ${port} ssh2`
        : `Accepted publickey for ${user} from ${ip} port ${port} ssh2`,
      user,
      src_ip: ip,
      src_port: port,
      action: fail ? 'login_failure' : 'login_success',
    };
  };

  const firewall = (ts: number): DemoRecord => {
    const dst = pick([22, 80, 443, 443, 443, 3306, 5432, 6379, 8080, 3389]);
    const allow = dst === 443 || dst === 80 ? r() < 0.95 : r() < 0.2;
    const src = clientIp();
    const dstIp = `10.0.${Math.floor(r() * 4)}.${1 + Math.floor(r() * 20)}`;
    return {
      ts: ts / 1000,
      host: 'fw-edge-1',
      app: 'firewall',
      severity: allow ? 'info' : 'notice',
      message: `${allow ? 'ALLOW' : 'DENY'} TCP ${src}:${1024 + Math.floor(r() * 60_000)} -> ${dstIp}:${dst}`,
      src_ip: src,
      src_port: 1024 + Math.floor(r() * 60_000),
      dst_ip: dstIp,
      dst_port: dst,
      action: allow ? 'allow' : 'deny',
      bytes: allow ? Math.floor(r() * 20_000) : 0,
      rule: allow ? 'allow-web' : `deny-${dst}`,
    };
  };

  const appError = (ts: number): DemoRecord => {
    const app = pick(APPS);
    const error = skew(ERRORS);
    return {
      time: iso(ts),
      service: app,
      host: `${app}-${1 + Math.floor(r() * 3)}`,
      level: r() < 0.1 ? 'critical' : 'error',
      msg: error,
      user: r() < 0.5 ? pick(USERS) : undefined,
      error: { type: error.split(' ')[0], trace_id: Math.floor(r() * 2 ** 48).toString(16) },
    };
  };

  return {
    next(ts) {
      const kind = r();
      if (kind < 0.6) return web(ts);
      if (kind < 0.75) return auth(ts);
      if (kind < 0.95) return firewall(ts);
      return appError(ts);
    },
  };
}
