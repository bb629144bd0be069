import type { BenchServer } from './lib.js';

/** Streams the restricted user of `npm run bench -- query` is given, of STREAMS by host. */
export const READABLE = 3;
export const STREAMS = 20;

async function api(server: BenchServer, token: string, method: string, url: string, body?: unknown) {
  const res = await fetch(`${server.url}${url}`, {
    method,
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
  return json;
}

/**
 * The reading rule's cost (streams and access): STREAMS streams, one per host of the data
 * set (`host:web-1` … `host:web-20`), and a user who reads READABLE of them, so every
 * query they make carries a read scope of three rules. Returns a server whose token is
 * that user's, to time the same cases with.
 */
export async function restrictedServer(server: BenchServer): Promise<BenchServer> {
  const admin = server.token;
  const existing = (await api(server, admin, 'GET', '/api/streams')) as { results: Array<{ title: string }> };
  const user = `restricted-${Date.now()}`;
  const made = await api(server, admin, 'POST', '/api/users', {
    username: user,
    password: 'bench-password-1',
  });
  for (let i = 1; i <= STREAMS; i++) {
    if (existing.results.some((s) => s.title === `web-${i}`)) continue;
    await api(server, admin, 'POST', '/api/streams', {
      title: `web-${i}`,
      rule: `host:web-${i}`,
      readers: { users: [] },
    });
  }
  const streams = (await api(server, admin, 'GET', '/api/streams')) as {
    results: Array<{ id: number; title: string; builtin: boolean }>;
  };
  // Nobody reads Default (it holds nothing here: every event has a host of the twenty).
  for (const s of streams.results) {
    const readable = ['web-1', 'web-2', 'web-3'].includes(s.title);
    await api(server, admin, 'PATCH', `/api/streams/${s.id}`, {
      readers: { users: readable ? [made.id] : [], teams: [] },
    });
  }
  const login = await api(server, admin, 'POST', '/api/auth/login', {
    username: user,
    password: 'bench-password-1',
  });
  return { ...server, token: String(login.secret_key) };
}
