/**
 * The delivery queue is durable: 100 notifications waiting for a receiver that is down
 * survive `kill -9` of the server, and after a restart each arrives once the receiver is up.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { freePort } from '../../helpers/served.js';

function serve(dataDir: string, port: number) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    env: {
      ...process.env,
      LOGSCOPE_DATA_DIR: dataDir,
      LOGSCOPE_PORT: String(port),
      LOGSCOPE_HOST: '127.0.0.1',
      LOGSCOPE_LOG_LEVEL: 'silent',
      LOGSCOPE_DATABASE_URL: '',
      LOGSCOPE_SYSLOG_PORT: '0',
      LOGSCOPE_GELF_PORT: '0',
    },
    stdio: 'ignore',
  });
}

const waitFor = <T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> =>
  eventually(what, f, { withinMs: ms, everyMs: 100, retryErrors: true });

describe('deliveries across kill -9', () => {
  it('loses none of 100 pending deliveries', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'logscope-deliveries-'));
    const port = await freePort();
    const hookPort = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let child = serve(dataDir, port);
    const received = new Map<string, number>();
    const hook = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        const id = (JSON.parse(body) as { samples: Array<{ message: string }> }).samples[0]?.message ?? '?';
        received.set(id, (received.get(id) ?? 0) + 1);
        res.end('ok');
      });
    });
    try {
      await waitFor(
        'the server',
        async () => ((await fetch(`${url}/api/health`)).ok ? true : undefined),
        30_000,
      );
      const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
      const call = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(`${url}${p}`, {
          method,
          headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return (await res.json()) as Record<string, unknown>;
      };
      // The receiver is down: every delivery fails and waits for its retry.
      const channel = await call('POST', '/api/channels', {
        name: 'down',
        type: 'webhook',
        config: { url: `http://127.0.0.1:${hookPort}/` },
      });
      await call('POST', '/api/triggers', {
        name: 'each',
        query: 'crashword',
        notify: [channel.id],
        cooldown_seconds: 0,
      });
      for (let i = 0; i < 100; i++) await call('POST', '/api/ingest', { message: `crashword ${i}` });
      await waitFor(
        '100 pending deliveries',
        async () => {
          const d = await call('GET', '/api/deliveries?status=pending&page_size=1');
          return d.count === 100 ? true : undefined;
        },
        15_000,
      );
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await exited;

      await new Promise<void>((r) => hook.listen(hookPort, '127.0.0.1', r));
      child = serve(dataDir, port);
      await waitFor('every delivery', async () => (received.size === 100 ? true : undefined), 40_000);
      expect([...received.keys()].sort()).toEqual(
        Array.from({ length: 100 }, (_, i) => `crashword ${i}`).sort(),
      );
      expect([...received.values()].every((n) => n === 1)).toBe(true);
      const sent = await waitFor(
        'the list to say sent',
        async () => {
          const d = await call('GET', '/api/deliveries?status=sent&page_size=1');
          return d.count === 100 ? d : undefined;
        },
        5_000,
      );
      expect(sent.count).toBe(100);
    } finally {
      child.kill('SIGKILL');
      hook.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
