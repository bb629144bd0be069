import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import net from 'node:net';
import path from 'node:path';

/** The checkout's root (where `dist/` and `npm start` are). */
export const ROOT = path.resolve(import.meta.dirname, '../..');

/** The environment a served process gets: this one's without any LOGSCOPE_ setting, then `extra`. */
export function servedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LOGSCOPE_')));
  return { ...clean, LOGSCOPE_HOST: '127.0.0.1', LOGSCOPE_DATABASE_URL: '', ...extra };
}

/** A process started from the checkout, its output gathered, its exit awaited. */
export interface Started {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  startedAt: number;
}

/** Starts `command args` in the checkout with `servedEnv(extra)`. */
export function start(command: string, args: string[], extra: Record<string, string>): Started {
  const child = spawn(command, args, { cwd: ROOT, env: servedEnv(extra) });
  const out = { stdout: '', stderr: '' };
  child.stdout?.on('data', (d) => {
    out.stdout += String(d);
  });
  child.stderr?.on('data', (d) => {
    out.stderr += String(d);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, out, exited, startedAt: Date.now() };
}

/** The built server (`dist/cli/index.js serve`) on `dataDir` and `port`, besides `extra`. */
export const serveBuilt = (dataDir: string, port: number, extra: Record<string, string> = {}): Started =>
  start(process.execPath, ['dist/cli/index.js', 'serve'], {
    LOGSCOPE_DATA_DIR: dataDir,
    LOGSCOPE_PORT: String(port),
    LOGSCOPE_LOG_LEVEL: 'warn',
    ...extra,
  });

/** A port free on loopback now (the kernel's pick). */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as net.AddressInfo;
    await new Promise((r) => server.close(r));
    // Never the same port twice to one process (the system may give a closed port again at
    // once: a server, its syslog and its GELF port drawn in a row collided), and free for
    // UDP too (the syslog and GELF listeners take both).
    if (given.has(port) || !(await udpFree(port))) continue;
    given.add(port);
    return port;
  }
}

const given = new Set<number>();

function udpFree(port: number): Promise<boolean> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}
