import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/features/backups/manifest.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { oldEventsMovedCold } from './cold-fixture.js';

// Backup jobs under way (docs/api/backups.md): a backup taken during a steady ingest holds
// every event acknowledged before it was asked for, each request's events whole; cold files
// are held until copied (one removed meanwhile is still in the backup, byte for byte);
// one job at a time, cancel, a finished job kept; audit records and metrics.
const embedded = BACKEND === 'sqlite' && EVENT_STORE === 'duckdb';

interface Job {
  id: string;
  status: string;
  started_at: string;
  finished_at: string;
  bytes: number;
  error: { code: string; detail: string } | null;
  counts: {
    events: { hot: number; cold: number };
    streams: Array<{ id: number; hot: number; cold: number; cold_files: number }>;
  } | null;
}

async function parquetColumn(glob: string, column: string): Promise<string[]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    const rows = (
      await c.runAndReadAll(`SELECT ${column} AS v FROM read_parquet('${glob}')`)
    ).getRowObjectsJS();
    return rows.map((r) => String(r.v));
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

describe.runIf(embedded)('backup jobs', () => {
  let t: TestApp;
  let root: string;
  let ingestToken: string;
  beforeAll(async () => {
    t = await createTestApp();
    root = mkdtempSync(path.join(tmpdir(), 'logscope-backup-jobs-'));
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST' })).secret_key;
  });
  afterAll(async () => {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  const post = (body: object, token = t.adminToken) =>
    t.as(token, { method: 'POST', url: '/api/admin/backups', payload: body });
  const job = async (id: string) =>
    (await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${id}` })).json() as Job;
  const ended = (id: string) =>
    eventually(
      `backup ${id} to end`,
      async () => {
        const j = await job(id);
        return j.status !== 'RUNNING' && j;
      },
      { withinMs: 60_000 },
    );

  it('holds every event acknowledged before the request, each request whole, during a steady ingest', async () => {
    const acked: Array<{ batch: string; at: number }> = [];
    let stop = false;
    let n = 0;
    const client = async (c: number) => {
      while (!stop) {
        const batch = `c${c}-b${n++}`;
        const lines = Array.from({ length: 50 }, (_, i) =>
          JSON.stringify({ message: `steady ${batch} line ${i}`, app: 'steady', batch }),
        ).join('\n');
        const res = await t.as(ingestToken, {
          method: 'POST',
          url: '/api/ingest',
          headers: { 'content-type': 'application/x-ndjson' },
          payload: lines,
        });
        expect(res.statusCode, res.body).toBe(200);
        acked.push({ batch, at: Date.now() });
      }
    };
    const clients = [client(1), client(2), client(3)];
    await eventually('a few requests acknowledged', () => acked.length >= 4, { withinMs: 30_000 });
    const asked = Date.now();
    const before = acked.filter((a) => a.at < asked).map((a) => a.batch);
    const res = await post({ path: path.join(root, 'steady') });
    expect(res.statusCode, res.body).toBe(202);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all(clients);
    const done = await ended(res.json().id);
    expect(done.status, JSON.stringify(done.error)).toBe('DONE');
    const messages = await parquetColumn(path.join(root, 'steady', 'hot', '*.parquet'), 'message');
    const byBatch = new Map<string, number>();
    for (const m of messages) {
      const batch = /^steady (\S+) line/.exec(m)?.[1];
      if (batch) byBatch.set(batch, (byBatch.get(batch) ?? 0) + 1);
    }
    expect(before.length).toBeGreaterThan(3);
    for (const b of before) expect(byBatch.get(b), b).toBe(50);
    // Each request all in or all out; no event twice.
    for (const [b, count] of byBatch) expect(count, b).toBe(50);
    expect(new Set(await parquetColumn(path.join(root, 'steady', 'hot', '*.parquet'), 'ev_id')).size).toBe(
      messages.length,
    );
    expect(done.counts?.events.hot).toBe(messages.length);
  });

  it('runs one job at a time; cancel removes its folder; a finished job stays', async () => {
    const slow = await post({ path: path.join(root, 'slow'), max_bytes_per_second: 1 });
    expect(slow.statusCode, slow.body).toBe(202);
    const id = slow.json().id as string;
    const second = await post({ path: path.join(root, 'second') });
    expect([second.statusCode, second.json().code, second.json().id]).toEqual([409, 'backup_running', id]);
    expect(existsSync(path.join(root, 'second'))).toBe(false);
    const cancel = await t.as(t.adminToken, { method: 'DELETE', url: `/api/admin/backups/${id}` });
    expect(cancel.statusCode, cancel.body).toBe(202);
    const gone = await ended(id);
    expect([gone.status, gone.error?.code]).toEqual(['CANCELLED', 'cancelled']);
    expect(existsSync(path.join(root, 'slow'))).toBe(false);
    // An empty folder given is left empty.
    mkdirSync(path.join(root, 'empty'));
    const again = await post({ path: path.join(root, 'empty') });
    expect(again.statusCode, again.body).toBe(202);
    expect((await ended(again.json().id)).status).toBe('DONE');
    const late = await t.as(t.adminToken, { method: 'DELETE', url: `/api/admin/backups/${again.json().id}` });
    expect([late.statusCode, late.json().code]).toEqual([409, 'backup_finished']);
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: '/api/admin/backups/01NOSUCHJOB' })).statusCode,
    ).toBe(404);
    const list = (await t.as(t.adminToken, { method: 'GET', url: '/api/admin/backups' })).json();
    expect(list.results[0].id).toBe(again.json().id);
    expect(list.results.map((j: Job) => j.status)).toContain('CANCELLED');
  });

  it('records each request and each end in the audit trail, and counts them in /metrics', async () => {
    const denied = await post({ path: path.join(root, 'denied') }, ingestToken);
    expect(denied.statusCode).toBe(403);
    await t.rt.services.audit.flush();
    const res = await t.as(t.adminToken, { method: 'GET', url: '/api/audit?page_size=1000&action=backup.' });
    const records = res.json().results as Array<{
      action: string;
      outcome: string;
      detail: Record<string, unknown>;
    }>;
    const of = (action: string, outcome: string) =>
      records.filter((r) => r.action === action && r.outcome === outcome);
    expect(of('backup.create', 'ok').length).toBeGreaterThanOrEqual(3);
    expect(of('backup.create', 'denied').length).toBe(1);
    expect(of('backup.create', 'error').map((r) => r.detail.code)).toContain('backup_running');
    expect(of('backup.cancel', 'ok').length).toBe(1);
    expect(of('backup.finish', 'ok').length).toBeGreaterThanOrEqual(2);
    expect(of('backup.finish', 'error').map((r) => (r.detail as { status: string }).status)).toContain(
      'CANCELLED',
    );
    const metrics = (await t.as(t.adminToken, { method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^logscope_backup_running 0$/m);
    expect(metrics).toMatch(/^logscope_backups_total\{status="DONE"\} [2-9]/m);
    expect(metrics).toMatch(/^logscope_backups_total\{status="CANCELLED"\} 1$/m);
    expect(metrics).toMatch(/^logscope_backup_last_success_timestamp_seconds [1-9]/m);
  });
});

describe.runIf(embedded)('a backup of the cold tier', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await createTestApp();
    root = mkdtempSync(path.join(tmpdir(), 'logscope-backup-cold-'));
    // 40 events on each of three days: the two older moved cold (a file each), the last hot.
    await oldEventsMovedCold(t, [5, 4, 1], 40);
  });
  afterAll(async () => {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('copies the cold files byte for byte, also one removed while the job runs', async () => {
    const coldDir = t.rt.config.coldDir;
    const files = (readdirSync(coldDir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) =>
      f.endsWith('.parquet'),
    );
    expect(files.length).toBe(2);
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    const before = new Map(files.map((f) => [f, sha(path.join(coldDir, f))]));
    // Slow enough that the removal happens before the copy.
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/admin/backups',
      payload: { path: path.join(root, 'cold'), max_bytes_per_second: 500_000 },
    });
    expect(res.statusCode, res.body).toBe(202);
    unlinkSync(path.join(coldDir, files[0] as string));
    const done = await eventually(
      'the backup to end',
      async () => {
        const j = (
          await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${res.json().id}` })
        ).json() as Job;
        return j.status !== 'RUNNING' && j;
      },
      { withinMs: 60_000 },
    );
    expect(done.status, JSON.stringify(done.error)).toBe('DONE');
    expect(done.counts?.events).toEqual({ hot: 40, cold: 80 });
    // The cap held: the job took at least its bytes at 500,000 a second.
    const took = Date.parse(done.finished_at) - Date.parse(done.started_at);
    expect(took).toBeGreaterThanOrEqual((done.bytes / 500_000) * 1000 * 0.95);
    const read = await readManifest(path.join(root, 'cold'));
    if ('problem' in read) throw new Error(read.problem);
    const cold = read.manifest.files.filter((f) => f.kind === 'cold');
    expect(cold.map((f) => f.path.replace(/^cold\//, '')).sort()).toEqual([...before.keys()].sort());
    for (const f of cold) {
      expect(f.sha256).toBe(before.get(f.path.replace(/^cold\//, '')));
      expect(sha(path.join(root, 'cold', f.path))).toBe(f.sha256);
    }
    // The hold is let go once the job ends.
    expect(existsSync(path.join(coldDir, '.backup-hold', res.json().id))).toBe(false);
  }, 60_000);
});
