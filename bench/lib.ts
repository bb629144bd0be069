import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function flag(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(`--${name}`);
  if (i === -1) return fallback;
  const v = Number(argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} needs a positive number`);
  return v;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export interface BenchServer {
  url: string;
  token: string;
  dataDir: string;
  pid: number;
  /** Peak resident set of the server so far (VmHWM), bytes. */
  peakRss(): number;
  /** Resident set of the server now (VmRSS), bytes. */
  rss(): number;
  stop(): Promise<void>;
}

function procStatus(pid: number, key: string): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
}

/** Starts a real server process on a free port with a fresh data dir. */
export async function startServer(env: Record<string, string> = {}): Promise<BenchServer> {
  const dataDir = env.LOGSCOPE_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'logscope-bench-'));
  const port = 18000 + Math.floor(Math.random() * 2000);
  const extra = process.env.BENCH_SERVER_NODE_FLAGS ? process.env.BENCH_SERVER_NODE_FLAGS.split(' ') : [];
  const child = spawn(process.execPath, [...extra, '--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    env: {
      ...process.env,
      LOGSCOPE_PORT: String(port),
      LOGSCOPE_HOST: '127.0.0.1',
      LOGSCOPE_LOG_LEVEL: 'warn',
      LOGSCOPE_DATABASE_URL: '',
      ...env,
      LOGSCOPE_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const started = Date.now();
  for (;;) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() - started > 60_000) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
  const pid = child.pid as number;
  return {
    url,
    token,
    dataDir,
    pid,
    peakRss: () => procStatus(pid, 'VmHWM'),
    rss: () => procStatus(pid, 'VmRSS'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
