import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import { eventually } from '../../helpers/eventually.js';

const waitForHealth = (url: string) =>
  eventually('the server to start', async () => (await fetch(`${url}/api/health`).catch(() => null))?.ok, {
    withinMs: 30_000,
    everyMs: 100,
  });

describe('durability', () => {
  it('keeps every acknowledged event across kill -9', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'logscope-crash-'));
    const port = 19000 + Math.floor(Math.random() * 1000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
      env: {
        ...process.env,
        LOGSCOPE_DATA_DIR: dataDir,
        LOGSCOPE_PORT: String(port),
        LOGSCOPE_HOST: '127.0.0.1',
        LOGSCOPE_LOG_LEVEL: 'silent',
        LOGSCOPE_DATABASE_URL: '',
      },
      stdio: 'ignore',
    });
    const url = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(url);
      const token = readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
      const acked: string[] = [];
      let killed = false;
      let seq = 0;
      const client = async (c: number) => {
        while (!killed) {
          const ids = Array.from({ length: 200 }, () => `crash-${c}-${seq++}`);
          try {
            const res = await fetch(`${url}/api/ingest`, {
              method: 'POST',
              headers: { authorization: `token ${token}`, 'content-type': 'application/x-ndjson' },
              body: ids.map((id) => JSON.stringify({ message: id, host: 'crash' })).join('\n'),
            });
            if (res.status === 200 && ((await res.json()) as { accepted: number }).accepted === ids.length)
              acked.push(...ids);
          } catch {
            return; // the server died mid-request: that request was never acknowledged
          }
        }
      };
      const exited = new Promise((r) => child.once('exit', r));
      const clients = [0, 1, 2, 3].map(client);
      await new Promise((r) => setTimeout(r, 1500));
      killed = true;
      child.kill('SIGKILL');
      await Promise.all(clients);
      await exited;
      expect(acked.length).toBeGreaterThan(1000);

      // Restart the store on the same files: the WAL is replayed.
      const store = await DuckDbEventStore.open({
        dataDir,
        memoryLimit: '256MB',
        checkpointThreshold: '16MB',
      });
      try {
        const rows = await store.runSql("SELECT message FROM events WHERE host = 'crash'");
        const stored = new Set(rows.map((r) => r.message as string));
        const missing = acked.filter((id) => !stored.has(id));
        expect(missing).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
