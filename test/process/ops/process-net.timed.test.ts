import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

// Issue 29: an unexpected error in one request is logged with its request id and ends
// that request, never the process. In a server process of its own (the fixture).

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CHILD = path.join(ROOT, 'test/fixtures/process-net/child.ts');

interface Server {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const running: ChildProcess[] = [];
afterEach(() => {
  for (const c of running.splice(0)) c.kill('SIGKILL');
});

async function start(env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  for (;;) {
    const m = /\{"url":"([^"]+)"\}/.exec(out);
    if (m) return { child, url: m[1]!, output: () => out, exited };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no server: ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const logLines = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{"level"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the process-wide net', () => {
  it('a throw in a timer: logged with its request id, that request answered 500, the server serves on', async () => {
    const s = await start();
    const res = await fetch(`${s.url}/test/throw-later`, { headers: { 'x-request-id': 'req-timer-1' } });
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ code: 'server_error', request_id: 'req-timer-1' });
    expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
    const logged = logLines(s.output()).find((l) => l.kind === 'uncaughtException');
    expect(logged).toMatchObject({ reqId: 'req-timer-1', level: 50 });
    expect(JSON.stringify(logged)).toContain('thrown in a timer');
    expect(s.child.exitCode).toBe(null);
  }, 30_000);

  it('a promise rejected and never awaited: logged with its request id; the answer already sent stands', async () => {
    const s = await start();
    const res = await fetch(`${s.url}/test/reject`, { headers: { 'x-request-id': 'req-reject-1' } });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(logLines(s.output()).find((l) => l.kind === 'unhandledRejection')).toMatchObject({
      reqId: 'req-reject-1',
    });
    expect((await fetch(`${s.url}/api/health`)).status).toBe(200);
  }, 30_000);

  it('a burst past maxErrors exits with code 1, for the service manager to restart it', async () => {
    const s = await start({ NET_MAX_ERRORS: '2' });
    for (let i = 0; i < 3; i++) await fetch(`${s.url}/test/reject`).catch(() => undefined);
    expect(
      await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('still running'), 5000))]),
    ).toBe(1);
    expect(s.output()).toContain('too many unexpected errors');
  }, 30_000);
});
