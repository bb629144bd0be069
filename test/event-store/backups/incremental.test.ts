import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../../src/event-store/duckdb/duckdb-event-store.js';
import { EVERY_EVENT } from '../../../src/event-store/read-scope.js';
import type { Manifest } from '../../../src/features/backups/manifest.js';
import { restoreBackup } from '../../../src/features/backups/restore.js';
import { verifyBackup } from '../../../src/features/backups/verify.js';
import { makeBackup, makeIncremental } from './backup-fixture.js';

/** An incremental backup: verified with its chain, restored from it. */
describe('an incremental backup', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'logscope-incremental-'));
  let full: { dir: string; manifest: Manifest; ids: string[] };
  const inc = path.join(root, 'incremental');
  let added: string[];

  beforeAll(async () => {
    full = await makeBackup(root);
    const id = (i: number) => full.ids[i] as string;
    added = [ulid(Date.UTC(2024, 4, 3)), ulid(Date.UTC(2024, 4, 3, 1))];
    await makeIncremental(full, inc, {
      changed: id(0),
      dropped: id(5),
      added: [
        { from: id(10), id: added[0] as string },
        { from: id(11), id: added[1] as string },
      ],
    });
  }, 60_000);
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('verifies with its chain, and finds a base that no longer holds what it inherits', async () => {
    const r = await verifyBackup(inc);
    expect(r).toMatchObject({ ok: true, problems: [], kind: 'incremental', events: 31 + 5 });
    const moved = `${full.dir}-moved`;
    const { renameSync } = await import('node:fs');
    renameSync(full.dir, moved);
    try {
      const gone = await verifyBackup(inc);
      expect(gone.ok).toBe(false);
      expect(gone.problems[0]).toMatchObject({ path: 'manifest.json', problem: 'base' });
    } finally {
      renameSync(moved, full.dir);
    }
  });

  it('restores the chain: the base events, the changed one as changed, the new ones, not the dropped one', async () => {
    const target = path.join(root, 'restored');
    const s = await restoreBackup({ dir: inc, dataDir: target, force: false });
    expect(s).toMatchObject({ kind: 'incremental', events: { hot: 31, cold: 5 } });
    expect(existsSync(path.join(target, 'cold/1/2024-04-30/part-0.parquet'))).toBe(true);
    const store = await DuckDbEventStore.open({
      dataDir: target,
      memoryLimit: '256MB',
      checkpointThreshold: '16MB',
    });
    try {
      const [row] = await store.runSql('SELECT count(*) AS n, count(DISTINCT ev_id) AS ids FROM events');
      expect([Number(row?.n), Number(row?.ids)]).toEqual([31, 31]);
      expect((await store.getById(full.ids[0] as string, EVERY_EVENT))?.message).toBe('changed in place');
      expect(await store.getById(full.ids[5] as string, EVERY_EVENT)).toBeNull();
      expect((await store.getById(full.ids[1] as string, EVERY_EVENT))?.message).toBe('event 1 from web-1');
      const [news] = await store.runSql(
        `SELECT count(*) AS n FROM events WHERE ev_id IN ('${added[0]}', '${added[1]}')`,
      );
      expect(Number(news?.n)).toBe(2);
    } finally {
      await store.close();
    }
  });
});
