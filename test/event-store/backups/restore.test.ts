import {
  cpSync,
  existsSync,
  mkdirSync,
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
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import { EVERY_EVENT } from '../../../src/event-store/read-scope.js';
import type { Manifest } from '../../../src/features/backups/manifest.js';
import { RestoreError, restoreBackup } from '../../../src/features/backups/restore.js';
import { STORE_FORMAT } from '../../../src/features/backups/store-format.js';
import { openSqliteDatabase } from '../../../src/metadata/sqlite-driver.js';
import { makeBackup, writeManifest } from './backup-fixture.js';

/** `restore` of a backup folder into a new data dir: its refusals, and what it makes. */
describe('restoreBackup', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'logscope-restore-'));
  let backup: string;
  let manifest: Manifest;
  let ids: string[];
  let n = 0;
  const fresh = () => path.join(root, `target-${n++}`);
  const listing = (dir: string) => (existsSync(dir) ? readdirSync(dir).sort() : null);

  beforeAll(async () => {
    ({ dir: backup, manifest, ids } = await makeBackup(root));
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('makes a data dir the event store opens, with every event, the metadata and the audit record', async () => {
    const target = fresh();
    const s = await restoreBackup({ dir: backup, dataDir: target, force: false });
    expect(s).toMatchObject({
      backup_id: manifest.id,
      kind: 'full',
      data_dir: target,
      cold_dir: path.join(target, 'cold'),
      cold_dir_given: false,
      events: { hot: 30, cold: 5 },
      store_format: 1,
    });
    expect(listing(target)).toEqual([
      'admin-token',
      'cold',
      'events.duckdb',
      'meta.sqlite',
      'reports',
      'store-format.json',
    ]);
    expect(statSync(target).mode & 0o777).toBe(0o700);
    for (const f of ['events.duckdb', 'meta.sqlite', 'admin-token', 'store-format.json'])
      expect(statSync(path.join(target, f)).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(target, 'cold/1/2024-04-30/part-0.parquet'))).toEqual(
      readFileSync(path.join(backup, 'cold/1/2024-04-30/part-0.parquet')),
    );
    expect(readFileSync(path.join(target, 'reports/1-2024-05-01.pdf'), 'utf8')).toContain('a report');
    // No build or old folder left beside it.
    expect(readdirSync(root).filter((f) => f.startsWith(path.basename(target)))).toEqual([
      path.basename(target),
    ]);

    const format = JSON.parse(readFileSync(path.join(target, 'store-format.json'), 'utf8'));
    expect(format.store_format).toBe(1);
    expect(format.instance_id).not.toBe(manifest.instance_id);
    expect(format.instance_id).toBe(s.instance_id);

    // The store opens it and answers with every event, as it was.
    const store = await DuckDbEventStore.open({
      dataDir: target,
      memoryLimit: '256MB',
      checkpointThreshold: '16MB',
    });
    try {
      const [row] = await store.runSql('SELECT count(*) AS n, count(DISTINCT ev_id) AS ids FROM events');
      expect(Number(row?.n)).toBe(30);
      expect(Number(row?.ids)).toBe(30);
      const one = await store.getById(ids[7] as string, EVERY_EVENT);
      expect(one?.message).toBe('event 7 from web-1');
    } finally {
      await store.close();
    }

    const sqlite = await openSqliteDatabase(path.join(target, 'meta.sqlite'), { readOnly: true });
    try {
      const rows = sqlite.database
        .prepare("SELECT * FROM audit_events WHERE action = 'backup.restore'")
        .all([]) as Array<Record<string, unknown>>;
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        user_id: null,
        username: null,
        token_key_id: null,
        address: 'local',
        target_kind: 'backup',
        target_id: manifest.id,
        outcome: 'ok',
      });
      expect(JSON.parse(String(rows[0]?.detail))).toEqual({
        backup_id: manifest.id,
        path: backup,
        kind: 'full',
        snapshot_at: manifest.snapshot_at,
        release: manifest.release,
      });
      const streams = sqlite.database.prepare('SELECT count(*) AS n FROM streams').all([]) as Array<{
        n: number;
      }>;
      expect(Number(streams[0]?.n)).toBe(manifest.counts.metadata.streams);
    } finally {
      sqlite.database.close();
    }
  });

  it('puts the cold files in --cold-dir when given', async () => {
    const target = fresh();
    const cold = path.join(root, `cold-${n}`);
    const s = await restoreBackup({ dir: backup, dataDir: target, coldDir: cold, force: false });
    expect(s).toMatchObject({ cold_dir: cold, cold_dir_given: true });
    expect(existsSync(path.join(cold, '1/2024-04-30/part-0.parquet'))).toBe(true);
    expect(listing(path.join(target, 'cold'))).toBeNull();
  });

  it('builds a --cold-dir inside the data dir with it', async () => {
    const target = fresh();
    const s = await restoreBackup({
      dir: backup,
      dataDir: target,
      coldDir: path.join(target, 'tiers/cold'),
      force: false,
    });
    expect(s).toMatchObject({ cold_dir: path.join(target, 'tiers/cold'), cold_dir_given: true });
    expect(existsSync(path.join(target, 'tiers/cold/1/2024-04-30/part-0.parquet'))).toBe(true);
    expect(statSync(path.join(target, 'tiers')).mode & 0o777).toBe(0o700);
  });

  it('refuses a backup that does not verify, with verify lines first, and writes nothing', async () => {
    const damaged = path.join(root, 'damaged');
    cpSync(backup, damaged, { recursive: true });
    writeFileSync(path.join(damaged, 'admin-token'), 'altered\n');
    const target = fresh();
    const err = await restoreBackup({ dir: damaged, dataDir: target, force: false }).catch((e) => e);
    expect(err).toBeInstanceOf(RestoreError);
    const lines = (err as Error).message.split('\n');
    expect(lines[0]).toMatch(/^admin-token: (size|checksum): /);
    expect(lines.at(-1)).toBe(`backup ${damaged} does not verify (1 problem): nothing restored`);
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(root).filter((f) => f.includes('.restore-'))).toEqual([]);
  });

  it('refuses a newer store format', async () => {
    const newer = path.join(root, 'newer');
    cpSync(backup, newer, { recursive: true });
    writeManifest(newer, { ...manifest, store_format: STORE_FORMAT + 4, release: '0.3.0' });
    const target = fresh();
    await expect(restoreBackup({ dir: newer, dataDir: target, force: false })).rejects.toThrow(
      `backup ${newer} is store format ${STORE_FORMAT + 4} (release 0.3.0); this release reads up to ${STORE_FORMAT}: restore it with 0.3.0 or later`,
    );
    expect(existsSync(target)).toBe(false);
  });

  it('refuses a target that is not empty without --force, and replaces it with --force', async () => {
    const target = fresh();
    mkdirSync(target);
    writeFileSync(path.join(target, 'keep.txt'), 'mine');
    await expect(restoreBackup({ dir: backup, dataDir: target, force: false })).rejects.toThrow(
      `the data dir ${target} is not empty: restore into a new folder, or give --force to replace it`,
    );
    expect(listing(target)).toEqual(['keep.txt']);
    await restoreBackup({ dir: backup, dataDir: target, force: true });
    expect(listing(target)).toContain('events.duckdb');
    expect(listing(target)).not.toContain('keep.txt');
    expect(readdirSync(root).filter((f) => f.startsWith(`${path.basename(target)}.`))).toEqual([]);
  });

  it('restores into an empty folder without --force', async () => {
    const target = fresh();
    mkdirSync(target);
    await restoreBackup({ dir: backup, dataDir: target, force: false });
    expect(listing(target)).toContain('meta.sqlite');
  });

  it('refuses a data dir a running server holds, even with --force', async () => {
    const target = fresh();
    await restoreBackup({ dir: backup, dataDir: target, force: false });
    const holder = await DuckDBInstance.create(path.join(target, 'events.duckdb'));
    try {
      // The lock is per process: another process must try it, as a restore beside a server does.
      const { spawnSync } = await import('node:child_process');
      const run = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `import('./src/features/backups/restore.ts').then((m) => m.restoreBackup({ dir: ${JSON.stringify(backup)}, dataDir: ${JSON.stringify(target)}, force: true })).then(() => console.log('restored'), (e) => console.log(e.message))`,
        ],
        { encoding: 'utf8', cwd: path.resolve(import.meta.dirname, '../../..') },
      );
      expect(run.stdout.trim()).toBe(
        `a running Logscope server holds ${target}: stop it first (nothing was restored)`,
      );
    } finally {
      holder.closeSync();
    }
    expect(listing(target)).toContain('events.duckdb');
  });

  it('refuses when the server is configured with PostgreSQL or ClickHouse', async () => {
    const target = fresh();
    await expect(
      restoreBackup({
        dir: backup,
        dataDir: target,
        force: false,
        stores: { databaseUrl: 'postgres://x/y' },
      }),
    ).rejects.toThrow(/PostgreSQL \(databaseUrl\)/);
    await expect(
      restoreBackup({
        dir: backup,
        dataDir: target,
        force: false,
        stores: { eventStoreUrl: 'http://ch:8123' },
      }),
    ).rejects.toThrow(/ClickHouse \(eventStoreUrl\)/);
    expect(existsSync(target)).toBe(false);
  });
});
