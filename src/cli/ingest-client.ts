import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';

/** A failure to tell the CLI user in one line, without a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
}

export interface IngestTarget {
  url: string;
  token: string;
}

export interface IngestTotals {
  accepted: number;
  rejected: number;
  errors: Array<{ index: number; detail: string }>;
}

/** The server to send to: `--url`/`--token`, else this config's port and admin token. */
export function ingestTarget(config: Config, opts: { url?: string; token?: string }): IngestTarget {
  const url = (opts.url ?? `http://127.0.0.1:${config.port}`).replace(/\/$/, '');
  let token = opts.token;
  if (!token) {
    const file = path.join(config.dataDir, 'admin-token');
    try {
      token = readFileSync(file, 'utf8').trim();
    } catch {
      throw new CliError(`No --token given and no ${file}: start the server once, or pass --token.`);
    }
  }
  return { url, token };
}

/**
 * Sends one NDJSON batch, waiting and retrying while the server says it is busy
 * (503/429 with Retry-After), so a long import never loses records to back-pressure.
 */
export async function sendBatch(target: IngestTarget, lines: readonly string[]): Promise<IngestTotals> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(`${target.url}/api/ingest`, {
        method: 'POST',
        headers: { authorization: `token ${target.token}`, 'content-type': 'application/x-ndjson' },
        body: `${lines.join('\n')}\n`,
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? String(err);
      throw new CliError(`Cannot reach ${target.url} (${cause}): is the server running?`);
    }
    if ((res.status === 503 || res.status === 429) && attempt < 50) {
      const wait = Number(res.headers.get('retry-after') ?? '1');
      await new Promise((r) => setTimeout(r, Math.max(0.1, wait) * 1000));
      continue;
    }
    const body = (await res.json()) as IngestTotals & { detail?: string };
    if (!res.ok) throw new CliError(`Server answered ${res.status}: ${body.detail ?? JSON.stringify(body)}`);
    return body;
  }
}

/** A one-line progress display on stderr (redrawn in place on a terminal). */
export function progress(label: string, total?: number) {
  const started = Date.now();
  let last = 0;
  const tty = process.stderr.isTTY;
  const render = (done: number, final = false) => {
    const now = Date.now();
    if (!final && now - last < 200) return;
    last = now;
    const secs = (now - started) / 1000;
    const rate = secs > 0 ? Math.round(done / secs) : 0;
    let line = `${label}: ${done.toLocaleString('en-US')}`;
    if (total) {
      const pct = Math.min(1, done / total);
      const width = 30;
      line = `${label} [${'#'.repeat(Math.round(pct * width)).padEnd(width, '.')}] ${(pct * 100).toFixed(1)}% ${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')}`;
    }
    line += ` (${rate.toLocaleString('en-US')}/s)`;
    if (tty) process.stderr.write(`\r${line}\x1b[K${final ? '\n' : ''}`);
    else if (final) process.stderr.write(`${line}\n`);
  };
  return { update: (done: number) => render(done), done: (done: number) => render(done, true) };
}
