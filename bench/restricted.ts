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
  await membershipWritten(server);
  const login = await api(server, admin, 'POST', '/api/auth/login', {
    username: user,
    password: 'bench-password-1',
  });
  return { ...server, token: String(login.secret_key) };
}

/**
 * Waits until the store has written every event's membership of the new streams (ADR
 * 0016; `logscope_stream_membership_pending` back to 0, twice in a row), as a server
 * that has run a while has: until then a scope is read by its rules.
 */
async function membershipWritten(server: BenchServer): Promise<void> {
  const started = Date.now();
  let idle = 0;
  while (idle < 2) {
    await new Promise((r) => setTimeout(r, 250));
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const pending = /^logscope_stream_membership_pending (\d+)/m.exec(text)?.[1];
    if (pending === undefined) throw new Error('/metrics has no logscope_stream_membership_pending');
    idle = pending === '0' ? idle + 1 : 0;
  }
  console.log(`stream membership written in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
