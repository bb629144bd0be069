import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { buildCli, exited, removeCli, runCli, startCli, until } from './run-cli.js';

/**
 * The CLI as child processes beside a real server on loopback: `search` and `tail` over
 * its API, `user create` on its data dir, checked against what the API says.
 */
describe('CLI beside a running server', () => {
  let t: TestApp;
  let url: string;
  const now = Date.now();
  const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();

  const ingest = async (records: object[]) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: records.length, rejected: 0 });
  };

  beforeAll(async () => {
    await buildCli();
    // Full re-runs of a tailed Search every 500 ms: the tail sees both kinds of update.
    t = await createTestApp({ LOGSCOPE_LIVE_REFRESH_MS: '500', LOGSCOPE_INGEST_BATCH_MS: '5' });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await ingest([
      { ts: at(30), host: 'db-1', app: 'postgres', severity: 'error', message: 'disk full on /var' },
      { ts: at(20), host: 'web-1', app: 'nginx', severity: 'info', message: 'GET / 200' },
      { ts: at(10), host: 'db-2', app: 'postgres', severity: 'warning', message: 'disk almost full' },
      { ts: at(180), host: 'db-1', app: 'postgres', severity: 'error', message: 'disk full long ago' },
    ]);
  });
  afterAll(async () => {
    removeCli();
    await t?.close();
  });

  const client = () => ['--url', url, '--token', t.adminToken];

  it('prints the matching events of the time range, oldest first, one a line', async () => {
    const r = await runCli(['search', 'disk', '--since', '1h', ...client()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // TZ=UTC in the child: local ISO time with +00:00.
    const utc = (minutesAgo: number) => at(minutesAgo).replace('Z', '+00:00');
    expect(r.stdout).toBe(
      `${utc(30)} error   db-1 postgres disk full on /var\n` +
        `${utc(10)} warning db-2 postgres disk almost full\n`,
    );
  });

  it('--json prints NDJSON, the events as the API returns them; --limit keeps the newest', async () => {
    // The default token: <data-dir>/admin-token of the server.
    const r = await runCli([
      'search',
      'disk',
      '--since',
      '4h',
      '--limit',
      '2',
      '--json',
      '--url',
      url,
      '--data-dir',
      t.dataDir,
    ]);
    expect(r.code).toBe(0);
    const events = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.map((e) => e.message)).toEqual(['disk full on /var', 'disk almost full']);
    for (const e of events)
      expect(e).toMatchObject({
        ev_id: expect.any(String),
        ts: expect.any(Number),
        host: expect.any(String),
      });
    expect(r.stderr).toMatch(/the newest 2 of 3 matching events/);
  });

  it('runs a query with pipes as a Table: aligned columns, or NDJSON rows', async () => {
    const r = await runCli([
      'search',
      'disk | stats count() as n by host | sort -n, host',
      '--since',
      '4h',
      ...client(),
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('host  n\ndb-1  2\ndb-2  1\n');
    const j = await runCli(['search', '* | top 1 app', '--since', '1h', '--json', ...client()]);
    expect(j.code).toBe(0);
    expect(
      j.stdout
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([{ app: 'postgres', count: 2 }]);
  });

  it('fails with one line: bad query (the server detail), refused token, unreachable server', async () => {
    const bad = 'status:[1 TO';
    const api = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { query: bad } },
    });
    expect(api.statusCode).toBe(400);
    const detail = api.json().detail as string;
    // A port nothing listens on.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const a = s.address() as { port: number };
        s.close(() => resolve(a.port));
      });
    });
    const [syntax, refused, down, downTail] = await Promise.all([
      runCli(['search', bad, ...client()]),
      runCli(['search', 'disk', '--url', url, '--token', 'lsnope_nope']),
      runCli(['search', 'disk', '--url', `http://127.0.0.1:${port}`, '--token', 'x']),
      runCli(['tail', 'disk', '--url', `http://127.0.0.1:${port}`, '--token', 'x']),
    ]);
    expect(syntax).toMatchObject({ code: 1, stdout: '', stderr: `logscope: ${detail}\n` });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^logscope: token refused by http:\/\/127\.0\.0\.1:\d+: check --token\n$/);
    const unreachable = `logscope: cannot reach http://127.0.0.1:${port} (is the server running?)\n`;
    expect(down).toMatchObject({ code: 1, stdout: '', stderr: unreachable });
    expect(downTail).toMatchObject({ code: 1, stdout: '', stderr: unreachable });
  });

  it('tail prints each event stored after it started once, oldest first, and exits 0 on SIGTERM', async () => {
    const child = startCli(['tail', 'disk', ...client()]);
    try {
      await until(
        () => child.out.stderr.includes('Tailing "disk"'),
        () => `the tail to subscribe; stderr: ${child.out.stderr}`,
      );
      // Newest first in the batch: the tail still prints the older one first.
      await ingest([
        { ts: at(1), host: 'db-3', app: 'postgres', severity: 'error', message: 'disk gone (newer)' },
        { ts: at(2), host: 'db-3', app: 'postgres', severity: 'error', message: 'disk gone (older)' },
        { ts: at(1), host: 'web-2', app: 'nginx', severity: 'info', message: 'not a match' },
      ]);
      await until(
        () => child.out.stdout.includes('(newer)'),
        () => `the new events; stdout: ${child.out.stdout}`,
      );
      // Full re-runs (every 500 ms) send the same events again: still printed once.
      await new Promise((r) => setTimeout(r, 1500));
      child.kill('SIGTERM');
      const r = await exited(child, 5000);
      expect(r.code).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/ error {3}db-3 postgres disk gone \(older\)$/);
      expect(lines[1]).toMatch(/ error {3}db-3 postgres disk gone \(newer\)$/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('user create applies the password and username rules of POST /api/users, with its 400 detail', async () => {
    const payloads = [
      { username: 'shorty', password: 'short' },
      { username: 'not valid', password: 'long-enough' },
    ];
    const details: string[] = [];
    for (const payload of payloads) {
      const api = await t.as(t.adminToken, { method: 'POST', url: '/api/users', payload });
      expect(api.statusCode).toBe(400);
      details.push(api.json().detail as string);
    }
    expect(details[0]).toMatch(/password/);
    const runs = await Promise.all(
      payloads.map((p) =>
        runCli(['user', 'create', p.username, '--password', p.password, '--data-dir', t.dataDir]),
      ),
    );
    expect(runs[0]).toMatchObject({ code: 1, stdout: '', stderr: `logscope: ${details[0]}\n` });
    expect(runs[1]).toMatchObject({ code: 1, stdout: '', stderr: `logscope: ${details[1]}\n` });
  });
});
