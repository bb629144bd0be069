import { answerError, apiFetch, type ServerTarget } from './api-client.js';

export interface IngestTotals {
  accepted: number;
  rejected: number;
  errors: Array<{ index: number; detail: string }>;
}

/**
 * Sends one NDJSON batch, waiting and retrying while the server says it is busy
 * (503/429 with Retry-After), so a long import never loses records to back-pressure.
 */
export async function sendBatch(target: ServerTarget, lines: readonly string[]): Promise<IngestTotals> {
  for (let attempt = 0; ; attempt++) {
    const res = await apiFetch(target, '/api/ingest', {
      method: 'POST',
      contentType: 'application/x-ndjson',
      body: `${lines.join('\n')}\n`,
    });
    if ((res.status === 503 || res.status === 429) && attempt < 50) {
      const wait = Number(res.headers.get('retry-after') ?? '1');
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, Math.max(0.1, wait) * 1000));
      continue;
    }
    if (!res.ok) throw await answerError(target, res);
    return (await res.json()) as IngestTotals;
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
