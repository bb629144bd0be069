import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { freePort, ROOT, serveBuilt } from '../../helpers/served.js';

/**
 * Issue #54: once in a long abuse sequence a restart right after `kill -9` during a report
 * did not come up. A killed process holds its files (DuckDB's lock, the port) until the
 * kernel has torn it down, which takes a moment for a large process or one in the middle
 * of disk writes; a restart in that moment found the data dir locked and stopped for good.
 * Here the killed server is held in that moment (SIGSTOP) while the new one starts.
 */
const dirs: string[] = [];
const children: ChildProcess[] = [];

function serve(dataDir: string, port: number) {
  const server = serveBuilt(dataDir, port);
  children.push(server.child);
  return server;
}

const healthy = (port: number, server: ReturnType<typeof serve>, withinMs: number) =>
  eventually(
    () => `health 200 on port ${port} (${server.out.stderr.trim() || 'no output'})`,
    async () => {
      if (server.child.exitCode !== null)
        throw new Error(`exited ${server.child.exitCode}: ${server.out.stderr}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
      return res?.status === 200;
    },
    { withinMs, everyMs: 100 },
  );

describe('a restart after kill -9 during a report', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'pipe' });
  }, 120_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('comes up once the killed server is gone, and fails the report it left PENDING', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'logscope-kill-'));
    dirs.push(dir);
    const port = await freePort();
    const first = serve(dir, port);
    await healthy(port, first, 30_000);
    const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
    const request = (url: string, init: RequestInit = {}) =>
      fetch(`http://127.0.0.1:${port}${url}`, {
        ...init,
        headers: {
          authorization: `token ${token}`,
          'content-type': url === '/api/ingest' ? 'application/x-ndjson' : 'application/json',
        },
      });
    const line = JSON.stringify({
      host: 'web-1',
      app: 'nginx',
      message: 'GET /api/v1/orders 200 "Mozilla/5.0"',
    });
    const ingested = await request('/api/ingest', { method: 'POST', body: `${line}\n`.repeat(50_000) });
    expect(ingested.status).toBe(200);
    const report = await request('/api/reports', {
      method: 'POST',
      body: JSON.stringify({
        title: 'every event',
        ftype: 'xlsx',
        source: {
          kind: 'query',
          query: { type: 'Search', params: { time_range: { preset: 'last_hour' }, sort: ['host'] } },
        },
      }),
    });
    expect(report.status).toBe(202);
    const reportId = ((await report.json()) as { id: number }).id;

    // Killed, but not torn down yet: it still holds the DuckDB lock and the port.
    first.child.kill('SIGSTOP');
    const second = serve(dir, port);
    await new Promise((r) => setTimeout(r, 2000));
    first.child.kill('SIGKILL');
    expect((await first.exited).code).toBeNull();

    await healthy(port, second, 20_000);
    expect(second.out.stderr).not.toMatch(/Cannot start/);
    const after = await request(`/api/reports/${reportId}`);
    expect(after.status).toBe(200);
    // Killed mid-way: failed with the reason, what it had written deleted.
    expect(await after.json()).toMatchObject({
      status: 'ERROR',
      error: expect.stringMatching(/server stopped while the report was being generated/),
    });
    expect(readdirSync(dir, { recursive: true }).filter((f) => String(f).endsWith('.part'))).toEqual([]);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  }, 90_000);
});
