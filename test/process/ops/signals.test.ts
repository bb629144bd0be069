import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { freePort, ROOT, type Started, serveBuilt, servedEnv } from '../../helpers/served.js';

/**
 * Signals arriving while the server already stops: a supervisor signals the process group
 * and npm forwards the signal once more, or an impatient operator presses Ctrl-C again.
 * The server went on to `process.exit` in the middle of its stop, with the event store's
 * worker closing DuckDB (exit 130, at times `terminate called after throwing an instance of
 * 'Napi::Error'`). However many arrive, it stops cleanly.
 */
const dirs: string[] = [];
const children: ChildProcess[] = [];

const dataDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'logscope-signals-'));
  dirs.push(d);
  return d;
};

const healthy = (port: number, server: Started) =>
  eventually(
    () => `health 200 on port ${port} (${server.out.stderr.trim() || 'no output'})`,
    async () => {
      if (server.child.exitCode !== null)
        throw new Error(`exited ${server.child.exitCode}: ${server.out.stderr}`);
      const res = await fetch(`http://127.0.0.1:${port}/api/health`).catch(() => null);
      return res?.status === 200;
    },
    { withinMs: 60_000, everyMs: 100 },
  );

/** Events for the stop to commit and the event store to close over. */
async function ingest(port: number, dir: string): Promise<void> {
  const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
  const lines = Array.from({ length: 5000 }, (_, i) =>
    JSON.stringify({ host: `h${i % 7}`, message: `line ${i}` }),
  );
  const res = await fetch(`http://127.0.0.1:${port}/api/ingest`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/x-ndjson' },
    body: lines.join('\n'),
  });
  expect(res.status).toBe(200);
}

/** A clean stop: exit code 0, or ended by the first signal as such, and no native abort. */
function expectClean(
  exit: { code: number | null; signal: NodeJS.Signals | null },
  signal: NodeJS.Signals,
  stderr: string,
) {
  expect(
    [
      { code: 0, signal: null },
      { code: null, signal },
    ],
    stderr,
  ).toContainEqual(exit);
  expect(stderr).not.toMatch(/terminate called|Napi::Error|without a clean stop/);
  expect(stderr).not.toMatch(/\n\s+at /);
}

describe('signals during the stop', () => {
  beforeAll(() => {
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'pipe' });
  }, 120_000);
  afterAll(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`the server stops cleanly on ${signal} sent twice at once, then a third time`, async () => {
      const dir = dataDir();
      const port = await freePort();
      const server = serveBuilt(dir, port);
      children.push(server.child);
      await healthy(port, server);
      await ingest(port, dir);
      server.child.kill(signal);
      server.child.kill(signal);
      await new Promise((r) => setTimeout(r, 20));
      if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill(signal);
      expectClean(await server.exited, signal, server.out.stderr);
    }, 90_000);
  }

  it('npm start stops cleanly when its process group gets SIGTERM twice, then a third time', async () => {
    const dir = dataDir();
    const port = await freePort();
    // Its own process group, as under a supervisor: a signal to the group reaches npm and
    // the server, and npm forwards it to the server once more.
    const child = spawn('npm', ['start', '--silent'], {
      cwd: ROOT,
      detached: true,
      env: servedEnv({ LOGSCOPE_DATA_DIR: dir, LOGSCOPE_PORT: String(port), LOGSCOPE_LOG_LEVEL: 'warn' }),
    });
    children.push(child);
    const out = { stdout: '', stderr: '' };
    child.stdout.on('data', (d) => {
      out.stdout += String(d);
    });
    child.stderr.on('data', (d) => {
      out.stderr += String(d);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const group = child.pid as number;
    const toGroup = () => {
      try {
        process.kill(-group, 'SIGTERM');
      } catch {
        // the group is gone already
      }
    };
    try {
      await healthy(port, { child, out, exited, startedAt: Date.now() });
      await ingest(port, dir);
      toGroup();
      toGroup();
      await new Promise((r) => setTimeout(r, 20));
      toGroup();
      expectClean(await exited, 'SIGTERM', out.stderr);
      // Nothing of the group is left.
      await eventually('the process group gone', () => {
        try {
          process.kill(-group, 0);
          return false;
        } catch {
          return true;
        }
      });
    } finally {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }, 120_000);
});
