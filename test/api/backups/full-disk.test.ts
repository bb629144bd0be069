import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { seedWeb } from '../../helpers/seed.js';

/**
 * A backup onto a disk that fills (docs/api/backups.md "A failed job"): the target is a
 * small tmpfs (we run as root; skipped where mounting is impossible). The job ends ERROR
 * `storage_full` naming the folder and the bytes written, its folder is removed, the server
 * keeps serving, and the next backup may start at once.
 */
const mountPoint = mkdtempSync(path.join(tmpdir(), 'logscope-backup-full-'));
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint], { stdio: 'ignore' });
  mounted = true;
} catch {
  rmdirSync(mountPoint);
}

describe.runIf(mounted && BACKEND === 'sqlite' && EVENT_STORE === 'duckdb')(
  'a backup onto a full disk',
  () => {
    let t: TestApp;
    let elsewhere: string;
    beforeAll(async () => {
      t = await createTestApp();
      elsewhere = mkdtempSync(path.join(tmpdir(), 'logscope-backup-room-'));
      // More than the disk holds: 600 web events and 20,000 of a few hundred random bytes.
      await seedWeb(t);
      const noise = Array.from({ length: 20_000 }, (_, i) => ({
        message: `${i} ${Math.random().toString(36).repeat(12)}`,
        app: 'noise',
      }));
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        headers: { 'content-type': 'application/x-ndjson' },
        payload: noise.map((n) => JSON.stringify(n)).join('\n'),
      });
      expect(res.statusCode, res.body).toBe(200);
    });
    afterAll(async () => {
      await t.close();
      rmSync(elsewhere, { recursive: true, force: true });
      try {
        execFileSync('umount', ['-l', mountPoint], { stdio: 'ignore' });
        rmdirSync(mountPoint);
      } catch {
        // left for the system's temp cleanup
      }
    });

    const finished = (id: string) =>
      eventually(
        `backup ${id} to end`,
        async () => {
          const j = (await t.as(t.adminToken, { method: 'GET', url: `/api/admin/backups/${id}` })).json();
          return j.status !== 'RUNNING' && j;
        },
        { withinMs: 60_000 },
      );

    it('ends ERROR storage_full, removes its folder, and the server goes on', async () => {
      const dir = path.join(mountPoint, 'nightly');
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/admin/backups',
        payload: { path: dir },
      });
      // The disk may fill before the 202 (the metadata's copy) or after it: either way a
      // clear answer, never a 500.
      if (res.statusCode === 202) {
        const job = await finished(res.json().id);
        expect([job.status, job.error?.code], job.error?.detail).toEqual(['ERROR', 'storage_full']);
        expect(job.error.detail).toMatch(
          new RegExp(`The disk holding ${dir} is full; \\d+ bytes were written`),
        );
      } else expect([res.statusCode, res.json().code], res.body).toEqual([507, 'storage_full']);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(mountPoint)).toEqual([]);
      // Serving goes on, and the next backup starts at once.
      expect((await t.as(t.adminToken, { method: 'GET', url: '/api/health' })).statusCode).toBe(200);
      const next = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/admin/backups',
        payload: { path: path.join(elsewhere, 'nightly') },
      });
      expect(next.statusCode, next.body).toBe(202);
      expect((await finished(next.json().id)).status).toBe('DONE');
    });
  },
);
