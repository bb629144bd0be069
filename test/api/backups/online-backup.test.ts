import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../../src/features/backups/manifest.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { seedWeb } from '../../helpers/seed.js';

// An online backup through the API (docs/api/backups.md): the job, its folder and manifest,
// what it holds, and who may ask. The embedded stores only (a cluster's are refused).
const embedded = BACKEND === 'sqlite' && EVENT_STORE === 'duckdb';

interface Job {
  id: string;
  status: string;
  kind: string;
  path: string;
  snapshot_at: string | null;
  progress: { fraction: number; files_done: number; files_total: number };
  counts: { events: { hot: number; cold: number }; metadata: Record<string, number> } | null;
  error: { code: string; detail: string } | null;
}

describe.runIf(embedded)('online backup', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    t = await createTestApp();
    root = mkdtempSync(path.join(tmpdir(), 'logscope-backups-'));
    await seedWeb(t);
  });
  afterAll(async () => {
    await t.close();
    rmSync(root, { recursive: true, force: true });
  });

  const post = (body: unknown, token = t.adminToken) =>
    t.as(token, { method: 'POST', url: '/api/admin/backups', payload: body as object });
  const job = async (id: string) =>
    (await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${id}` })).json() as Job;
  const finished = (id: string) =>
    eventually(
      `backup ${id} to end`,
      async () => {
        const j = await job(id);
        return j.status !== 'RUNNING' && j;
      },
      { withinMs: 30_000 },
    );

  it('writes a folder with a manifest listing every file, the events and the metadata of the instant', async () => {
    const dir = path.join(root, 'full-1');
    const res = await post({ path: dir });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.headers.location).toBe(`/api/admin/backups/${res.json().id}`);
    expect(res.json().snapshot_at).not.toBeNull();
    const done = await finished(res.json().id);
    expect(done.status, JSON.stringify(done.error)).toBe('DONE');
    expect(done.progress.fraction).toBe(1);
    expect(done.counts?.events).toEqual({ hot: 600, cold: 0 });
    expect(done.counts?.metadata.users).toBe(1);
    const read = await readManifest(dir);
    if ('problem' in read) throw new Error(read.problem);
    const m = read.manifest;
    expect(m.kind).toBe('full');
    expect(m.layout).toBe('logical');
    expect(existsSync(path.join(dir, 'BACKUP_INCOMPLETE'))).toBe(false);
    const listed = m.files.map((f) => f.path).sort();
    const onDisk: string[] = [];
    const walk = (rel: string) => {
      for (const e of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
        const child = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(child);
        else if (child !== 'manifest.json') onDisk.push(child);
      }
    };
    walk('');
    expect(onDisk.sort()).toEqual(listed);
    expect(listed).toContain('metadata/meta.sqlite');
    expect(listed).toContain('store/schema.sql');
    expect(m.files.filter((f) => f.kind === 'hot').reduce((n, f) => n + (f.rows ?? 0), 0)).toBe(600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const f of m.files) expect(statSync(path.join(dir, f.path)).mode & 0o777).toBe(0o600);
    // The hot part holds every event, sorted by ts then ev_id.
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const rows = (
      await c.runAndReadAll(`SELECT ev_id FROM read_parquet('${path.join(dir, 'hot', '*.parquet')}')`)
    ).getRowObjectsJS();
    expect(rows.length).toBe(600);
    c.closeSync();
    db.closeSync();
    expect(readFileSync(path.join(dir, 'admin-token'), 'utf8').trim()).toBe(t.adminToken);
  });

  it('refuses what the contract refuses, in its order, writing nothing', async () => {
    // A backup of another installation (its instance_id), and one cut short.
    const foreign = path.join(root, 'foreign');
    cpSync(path.join(root, 'full-1'), foreign, { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(foreign, 'manifest.json'), 'utf8'));
    writeFileSync(
      path.join(foreign, 'manifest.json'),
      JSON.stringify({ ...manifest, instance_id: 'elsewhere' }),
    );
    const cut = path.join(root, 'cut');
    cpSync(path.join(root, 'full-1'), cut, { recursive: true });
    writeFileSync(path.join(cut, 'BACKUP_INCOMPLETE'), '');
    const cases: Array<[unknown, number, string]> = [
      [{}, 400, 'invalid'],
      [{ path: '' }, 400, 'invalid'],
      [{ path: 'backups/x' }, 400, 'path_not_absolute'],
      [{ path: `${root}/../x` }, 400, 'path_traversal'],
      [{ path: path.join(t.dataDir, 'b') }, 400, 'path_inside_data_dir'],
      [{ path: path.join(root, 'no', 'such') }, 400, 'parent_missing'],
      [{ path: path.join(root, 'full-1') }, 409, 'backup_target_exists'],
      [{ path: path.join(root, 'x'), since: path.join(root, 'nothing') }, 400, 'since_invalid'],
      [{ path: path.join(root, 'x'), since: foreign }, 400, 'since_invalid'],
      [{ path: path.join(root, 'x'), since: cut }, 400, 'since_invalid'],
      [{ path: path.join(root, 'x'), since: 'relative/base' }, 400, 'since_invalid'],
      [{ path: path.join(root, 'x'), max_bytes_per_second: -1 }, 400, 'invalid'],
    ];
    for (const [body, status, code] of cases) {
      const res = await post(body);
      expect([res.statusCode, res.json().code], JSON.stringify(body)).toEqual([status, code]);
    }
    expect(existsSync(path.join(root, 'x'))).toBe(false);
    const reader = await t.user('reader', { permissions: ['READ_EVENTS' as never] });
    const denied = await post({ path: path.join(root, 'x') }, reader.token);
    expect(denied.statusCode).toBe(403);
  });
});
