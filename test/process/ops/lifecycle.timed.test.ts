import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { freePort, ROOT, type Started, start } from '../../helpers/served.js';

/**
 * `npm start` as an operator runs it: the real npm, the real build in dist/ (compiled
 * by the prestart step only when a source changed), signals sent to npm's process.
 * The server runs on SQLite in its own data dir, whatever the suite's backend.
 */
const dirs: string[] = [];

const npmStart = (dataDir: string, port: number, extra: Record<string, string> = {}) =>
  start('npm', ['start', '--silent'], { LOGSCOPE_DATA_DIR: dataDir, LOGSCOPE_PORT: String(port), ...extra });

async function healthy(port: number, started: Started, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (res.status === 200) return Date.now() - t0;
    } catch {
      // not listening yet
    }
    if (started.child.exitCode !== null) throw new Error(`exited early: ${started.out.stderr}`);
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`no health within ${timeoutMs} ms: ${started.out.stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  ]);

/** The pids of processes whose environment names this data dir (the server, whoever started it). */
function serversOf(dataDir: string): number[] {
  const mark = `LOGSCOPE_DATA_DIR=${dataDir}\0`;
  const pids: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (`${readFileSync(`/proc/${pid}/environ`, 'latin1')}\0`.includes(mark)) pids.push(Number(pid));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids.filter((pid) => pid !== process.pid);
}

/** Writes one payload on a TCP connection and closes it. */
function sendTcp(port: number, payload: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.end(payload, () => resolve()));
    sock.once('error', reject);
  });
}

/** Whether nothing listens on a TCP port any more. */
function tcpRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1', () => {
      sock.destroy();
      resolve(false);
    });
    sock.once('error', () => resolve(true));
  });
}

const refused = (port: number) =>
  fetch(`http://127.0.0.1:${port}/api/health`).then(
    () => false,
    () => true,
  );

describe('npm start', () => {
  beforeAll(() => {
    // Brings dist/ up to date once, as the first `npm start` of a fresh clone does.
    execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: ROOT, stdio: 'pipe' });
  }, 120_000);
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const dataDir = () => {
    const d = mkdtempSync(path.join(tmpdir(), 'logscope-ops-'));
    dirs.push(d);
    return d;
  };

  it('stops cleanly on SIGTERM to npm: websockets closed 1001, exit 0, nothing left; restarts within 3 s', async () => {
    const dir = dataDir();
    const port = await freePort();
    const first = npmStart(dir, port);
    await healthy(port, first, 60_000);
    // The first-start banner goes to stderr, with the logs.
    expect(first.out.stderr).toMatch(/First start: created user "admin"/);
    expect(first.out.stdout).not.toMatch(/First start/);
    const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
    // The banner's password signs in to the web UI (and is in admin-password, 0600).
    const password = readFileSync(path.join(dir, 'admin-password'), 'utf8').trim();
    expect(first.out.stderr).toContain(`user admin, password ${password}`);
    const login = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    expect(login.status).toBe(200);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws/live-updates`, {
      headers: { authorization: `token ${token}` },
    });
    await within(new Promise((r) => ws.once('open', r)), 5000, 'websocket open');
    const closed = new Promise<number>((r) => ws.once('close', (code) => r(code)));

    first.child.kill('SIGTERM');
    expect(await within(closed, 5000, 'websocket close')).toBe(1001);
    expect(await within(first.exited, 15_000, 'npm exit')).toEqual({ code: 0, signal: null });
    expect(await refused(port)).toBe(true);
    expect(serversOf(dir)).toEqual([]);
    expect(first.out.stderr).not.toMatch(/\n\s+at /);

    // A restart with nothing changed compiles nothing and answers within 3 s (the best
    // of two, so one slow moment of a busy test machine does not decide it).
    const times: number[] = [];
    for (let i = 0; i < 2; i++) {
      const again = npmStart(dir, port);
      times.push(await healthy(port, again, 30_000));
      expect(again.out.stderr).not.toMatch(/built src/);
      again.child.kill('SIGINT');
      expect(await within(again.exited, 15_000, 'npm exit on SIGINT')).toEqual({ code: 0, signal: null });
    }
    expect(Math.min(...times)).toBeLessThanOrEqual(3000);
    expect(serversOf(dir)).toEqual([]);
  }, 150_000);

  it('writes one log line per request, health and metrics scrapes only at debug', async () => {
    const dir = dataDir();
    const port = await freePort();
    const s = npmStart(dir, port);
    await healthy(port, s, 60_000);
    const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
    await fetch(`http://127.0.0.1:${port}/metrics`);
    await fetch(`http://127.0.0.1:${port}/api/authtokens?token=${token}`, {
      headers: { authorization: `token ${token}` },
    });
    s.child.kill('SIGTERM');
    await within(s.exited, 15_000, 'exit');
    const lines = s.out.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; url?: string; status?: number; ms?: number });
    const requests = lines.filter((l) => l.url !== undefined);
    expect(requests.map((l) => l.msg.replace(/ [\d.]+ ms$/, ''))).toEqual([
      'GET /api/authtokens?token=<redacted> 200',
    ]);
    expect(requests[0]?.ms).toBeGreaterThanOrEqual(0);
    expect(s.out.stdout).not.toContain(token);
  }, 90_000);

  it('listens for syslog and GELF with the server, and closes both when it stops', async () => {
    const dir = dataDir();
    const [port, syslogPort, gelfPort] = [await freePort(), await freePort(), await freePort()];
    const s = npmStart(dir, port, {
      LOGSCOPE_SYSLOG_HOST: '127.0.0.1',
      LOGSCOPE_SYSLOG_PORT: String(syslogPort),
      LOGSCOPE_GELF_HOST: '127.0.0.1',
      LOGSCOPE_GELF_PORT: String(gelfPort),
    });
    await healthy(port, s, 60_000);
    const token = readFileSync(path.join(dir, 'admin-token'), 'utf8').trim();
    // One RFC 5424 line over TCP (octet-counted), one GELF message over TCP (NUL-ended).
    const line = '<13>1 2026-01-01T00:00:00Z host1 app1 - - - from-syslog-listener';
    const gelf = `${JSON.stringify({ version: '1.1', host: 'host2', short_message: 'from-gelf-listener', timestamp: 1767225600 })}\0`;
    await sendTcp(syslogPort, `${Buffer.byteLength(line)} ${line}`);
    await sendTcp(gelfPort, gelf);
    const found = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/api/query`, {
        method: 'POST',
        headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          type: 'Search',
          params: { query: 'from', time_range: { ts_from: 1767139200, ts_to: 1767312000 } },
        }),
      });
      const body = (await res.json()) as { results?: { events?: Array<{ message: string }> } };
      return (body.results?.events ?? []).map((e) => e.message).sort();
    };
    const t0 = Date.now();
    let messages: string[] = [];
    while (Date.now() - t0 < 15_000 && messages.length < 2) {
      messages = await found();
      if (messages.length < 2) await new Promise((r) => setTimeout(r, 200));
    }
    expect(messages).toEqual(['from-gelf-listener', 'from-syslog-listener']);
    // Its figures are in /metrics with the rest.
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toMatch(/logscope_syslog_/);

    s.child.kill('SIGTERM');
    expect(await within(s.exited, 15_000, 'npm exit')).toEqual({ code: 0, signal: null });
    expect(await tcpRefused(syslogPort)).toBe(true);
    expect(await tcpRefused(gelfPort)).toBe(true);
  }, 90_000);

  it('names the listener port in use, not the HTTP one, with one line and exit 1', async () => {
    const dir = dataDir();
    const blocker: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    const taken = (blocker.address() as { port: number }).port;
    try {
      const port = await freePort();
      const s = start(process.execPath, ['dist/cli/index.js', 'serve'], {
        LOGSCOPE_DATA_DIR: dir,
        LOGSCOPE_PORT: String(port),
        LOGSCOPE_SYSLOG_HOST: '127.0.0.1',
        LOGSCOPE_SYSLOG_PORT: String(taken),
      });
      expect(await within(s.exited, 30_000, 'exit')).toEqual({ code: 1, signal: null });
      expect(s.out.stderr.trim()).toBe(
        `logscope: Cannot start: port ${taken} on 127.0.0.1 is already in use (another Logscope or program listens there); stop it or choose another port with LOGSCOPE_SYSLOG_PORT / LOGSCOPE_GELF_PORT.`,
      );
      expect(serversOf(dir)).toEqual([]);
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('refuses a port in use with one line and exit 1', async () => {
    const dir = dataDir();
    const blocker: Server = await new Promise((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => resolve(s));
    });
    const port = (blocker.address() as { port: number }).port;
    try {
      const s = start(process.execPath, ['dist/cli/index.js', 'serve'], {
        LOGSCOPE_DATA_DIR: dir,
        LOGSCOPE_PORT: String(port),
      });
      expect(await within(s.exited, 30_000, 'exit')).toEqual({ code: 1, signal: null });
      expect(s.out.stderr.trim()).toBe(
        `logscope: Cannot start: port ${port} on 127.0.0.1 is already in use (another Logscope or program listens there); stop it or choose another port with --port / LOGSCOPE_PORT.`,
      );
      expect(serversOf(dir)).toEqual([]);
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('refuses a data dir another server holds with one line naming its PID', async () => {
    const dir = dataDir();
    const port = await freePort();
    const first = start(process.execPath, ['dist/cli/index.js', 'serve'], {
      LOGSCOPE_DATA_DIR: dir,
      LOGSCOPE_PORT: String(port),
    });
    try {
      await healthy(port, first, 30_000);
      const second = start(process.execPath, ['dist/cli/index.js', 'serve'], {
        LOGSCOPE_DATA_DIR: dir,
        LOGSCOPE_PORT: String(await freePort()),
      });
      expect(await within(second.exited, 30_000, 'exit')).toEqual({ code: 1, signal: null });
      expect(second.out.stderr.trim()).toBe(
        `logscope: Cannot start: the data directory ${dir} is in use by another Logscope process (PID ${first.child.pid}); stop it or choose another data dir with --data-dir / LOGSCOPE_DATA_DIR.`,
      );
      // The first one never noticed.
      expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
    } finally {
      first.child.kill('SIGTERM');
      await within(first.exited, 15_000, 'exit');
    }
  }, 60_000);

  it('retries an unreachable PostgreSQL for databaseConnectSeconds, then stops with one line', async () => {
    const dir = dataDir();
    const pgPort = await freePort(); // nothing listens there
    const t0 = Date.now();
    const s = start(process.execPath, ['dist/cli/index.js', 'serve'], {
      LOGSCOPE_DATA_DIR: dir,
      LOGSCOPE_PORT: String(await freePort()),
      LOGSCOPE_DATABASE_URL: `postgres://root:secret@127.0.0.1:${pgPort}/test`,
      LOGSCOPE_DATABASE_CONNECT_SECONDS: '2',
    });
    expect(await within(s.exited, 30_000, 'exit')).toEqual({ code: 1, signal: null });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1500);
    const lines = s.out.stderr.trim().split('\n');
    expect(lines).toEqual([
      `logscope: PostgreSQL at 127.0.0.1:${pgPort}/test is unreachable (connection refused); retrying for up to 2 s`,
      `logscope: Cannot start: PostgreSQL at 127.0.0.1:${pgPort}/test is unreachable (connection refused) after trying for 2 s; check that it runs and databaseUrl (LOGSCOPE_DATABASE_URL), or wait longer with databaseConnectSeconds.`,
    ]);
    expect(s.out.stderr).not.toContain('secret');
    // Nothing was created for the events either: the server stopped before opening them.
    expect(existsSync(path.join(dir, 'events.duckdb'))).toBe(false);
  }, 60_000);

  const pgUrl = process.env.LOGSCOPE_TEST_DATABASE_URL;
  it.runIf(pgUrl)(
    'comes up once PostgreSQL becomes reachable during the retries',
    async () => {
      const dir = dataDir();
      const target = new URL(pgUrl as string);
      const proxyPort = await freePort();
      const url = new URL(pgUrl as string);
      url.hostname = '127.0.0.1';
      url.port = String(proxyPort);
      const port = await freePort();
      const s = start(process.execPath, ['dist/cli/index.js', 'serve'], {
        LOGSCOPE_DATA_DIR: dir,
        LOGSCOPE_PORT: String(port),
        LOGSCOPE_DATABASE_URL: url.toString(),
        LOGSCOPE_DATABASE_CONNECT_SECONDS: '30',
      });
      // PostgreSQL "comes up" 2 s later: a TCP relay to the real server starts listening.
      await new Promise((r) => setTimeout(r, 2000));
      const { connect } = await import('node:net');
      const relay = createServer((client) => {
        const upstream = connect(Number(target.port || 5432), target.hostname);
        client.pipe(upstream).pipe(client);
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
      }).listen(proxyPort, '127.0.0.1');
      try {
        await healthy(port, s, 30_000);
        expect(s.out.stderr).toMatch(/is unreachable \(connection refused\); retrying for up to 30 s/);
        s.child.kill('SIGTERM');
        expect(await within(s.exited, 15_000, 'exit')).toEqual({ code: 0, signal: null });
      } finally {
        relay.close();
        s.child.kill('SIGKILL');
      }
    },
    60_000,
  );

  it('in a production install (no esbuild) runs the existing build, and without one says what to run', () => {
    const root = dataDir();
    const script = path.join(root, 'scripts', 'build.mjs');
    execFileSync('mkdir', ['-p', path.join(root, 'scripts'), path.join(root, 'src')]);
    execFileSync('cp', [path.join(ROOT, 'scripts', 'build.mjs'), script]);
    for (const f of ['tsconfig.json', 'package.json', 'package-lock.json'])
      execFileSync('touch', [path.join(root, f)]);
    execFileSync('touch', [path.join(root, 'src', 'index.ts')]);
    const run = () => {
      try {
        return {
          code: 0,
          stderr: execFileSync(process.execPath, [script, '--if-stale'], { stdio: 'pipe' }).toString(),
        };
      } catch (err) {
        const e = err as { status: number; stderr: Buffer };
        return { code: e.status, stderr: String(e.stderr) };
      }
    };
    expect(run()).toEqual({
      code: 1,
      stderr:
        'logscope: no build in dist/ and esbuild is not installed: run "npm ci && npm run build" before "npm ci --omit=dev"\n',
    });
    execFileSync('mkdir', ['-p', path.join(root, 'dist', 'cli')]);
    execFileSync('touch', [path.join(root, 'dist', 'cli', 'index.js')]);
    expect(run()).toEqual({ code: 0, stderr: '' });
  });
});
