import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  rmdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, isNoSpaceError, storageFull } from '../../../src/errors/errors.js';
import { startupMessage } from '../../../src/errors/startup.js';
import {
  IDLE_CHECKPOINT_MS,
  IDLE_CHECKPOINT_WAL_BYTES,
} from '../../../src/event-store/duckdb/duckdb-maintenance.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * Full disk (docs/api/resource-bounds.md), for real: the data dir is a tiny tmpfs (we run as root) that a
 * filler file fills up. Skipped where mounting is impossible; the error mapping is then
 * still checked with a real ENOSPC from /dev/full.
 */
const mountPoint = mkdtempSync(path.join(tmpdir(), 'logscope-full-'));
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mountPoint], { stdio: 'ignore' });
  mounted = true;
} catch {
  rmdirSync(mountPoint);
}

/** Writes zeros into `file` until the file system is full. */
function fill(file: string): void {
  const fd = openSync(file, 'a');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
    // The last few KiB too, so not even a small page fits.
    const small = Buffer.alloc(512);
    try {
      for (;;) writeSync(fd, small);
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
}

describe('full disk errors', () => {
  it('a real ENOSPC (/dev/full) and the engines’ texts are storage_full; 507', () => {
    let enospc: unknown;
    try {
      const fd = openSync('/dev/full', 'w');
      try {
        writeSync(fd, Buffer.alloc(10));
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      enospc = err;
    }
    expect((enospc as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(isNoSpaceError(enospc)).toBe(true);
    expect(
      isNoSpaceError(
        new Error(
          'Failed to append: Failed to commit: Could not write file "x.wal": No space left on device',
        ),
      ),
    ).toBe(true);
    expect(
      isNoSpaceError(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' })),
    ).toBe(true);
    expect(isNoSpaceError(new Error('Constraint Error: duplicate key'))).toBe(false);
    const e = storageFull();
    expect(e).toBeInstanceOf(AppError);
    expect([e.status, e.code]).toEqual([507, 'storage_full']);
  });
});

// The DuckDB event store's disk: a ClickHouse store keeps its events on the ClickHouse servers.
describe.skipIf(!mounted || EVENT_STORE !== 'duckdb')(`a full data disk (tmpfs) on ${BACKEND}`, () => {
  let t: TestApp;
  let ingestToken: string;
  /** The app serving now (the restart test replaces the one createTestApp made). */
  let app: TestApp['app'];
  let reopened: { close(): Promise<void> } | undefined;
  let queryId = '';
  const filler = path.join(mountPoint, 'filler');
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_DATA_DIR: mountPoint, LOGSCOPE_DUCKDB_MEMORY_LIMIT: '128MB' });
    const tok = await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' });
    ingestToken = tok.secret_key;
    app = t.app;
  });
  afterAll(async () => {
    rmSync(filler, { force: true });
    if (reopened) {
      await app.close();
      await reopened.close();
      rmSync(t.dataDir, { recursive: true, force: true });
    } else await t?.close();
  });

  const ingest = (n: number, tag: string) =>
    app.inject({
      headers: { authorization: `token ${ingestToken}` },
      method: 'POST',
      url: '/api/ingest',
      payload: Array.from({ length: n }, (_, i) => ({
        message: `${tag} ${i} ${'x'.repeat(200)}`,
        host: 'h1',
      })),
    });
  const health = () => app.inject({ method: 'GET', url: '/api/health' });

  it('ingest answers 507 storage_full while the disk is full, health 503 naming the store; both recover once space is freed', async () => {
    expect((await ingest(10, 'before')).statusCode).toBe(200);
    expect((await health()).statusCode).toBe(200);
    // A query to read while the disk is full (and the admin token's first use, which
    // notes it with a write, happens before the disk fills).
    const created = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: { preset: 'last_hour' } } },
    });
    expect(created.statusCode, created.body).toBe(200);
    queryId = created.json().query_id;

    fill(filler);
    // A batch bigger than any space left over inside DuckDB's own blocks.
    const full = await ingest(5000, 'during');
    expect(full.statusCode, full.body).toBe(507);
    expect(full.json()).toMatchObject({ code: 'storage_full' });
    expect(full.json().detail).not.toMatch(/Failed to commit|\.wal/);
    const h = await health();
    expect(h.statusCode).toBe(503);
    expect(h.json().failing).toContain('events');
    expect(h.json().dependencies.events).toEqual({ kind: 'duckdb', status: 'unavailable' });
    // Reads still work (with a token whose last use was noted within the minute).
    const q = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${queryId}` });
    expect(q.statusCode, q.body).toBe(200);
    expect(q.json().results.total).toBe(10);

    rmSync(filler);
    expect((await health()).statusCode).toBe(200);
    const again = await ingest(100, 'after');
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().accepted).toBe(100);
    expect((await health()).statusCode).toBe(200);
  });

  it('a metadata write (SQLite) on the full disk is 507 storage_full, never 500', async () => {
    if (BACKEND !== 'sqlite') return;
    fill(filler);
    try {
      let res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/tasks',
        payload: { title: `t ${'y'.repeat(200)}`, description: 'z'.repeat(9000) },
      });
      // SQLite may still fit a small row in a free page of its file: write until it does not.
      for (let i = 0; i < 200 && res.statusCode !== 507; i++) {
        res = await t.as(t.adminToken, {
          method: 'POST',
          url: '/api/tasks',
          payload: { title: `t${i}`, description: 'z'.repeat(9000) },
        });
        expect(res.statusCode, res.body).not.toBe(500);
      }
      expect(res.statusCode, res.body).toBe(507);
      expect(res.json().code).toBe('storage_full');
    } finally {
      rmSync(filler, { force: true });
    }
  });

  it('a restart on a full disk serves reads, or stops with one clear line', async () => {
    expect((await ingest(50, 'restart')).statusCode).toBe(200);
    const pgSchema = t.pgSchema;
    await t.app.close();
    await t.rt.close();
    fill(filler);
    const { openRuntime } = await import('../../../src/runtime.js');
    const { loadConfig } = await import('../../../src/config/config.js');
    const config = loadConfig({
      env: {
        LOGSCOPE_DATA_DIR: mountPoint,
        LOGSCOPE_DUCKDB_MEMORY_LIMIT: '128MB',
        // The same metadata store as before the restart (PostgreSQL when the suite runs on it).
        LOGSCOPE_DATABASE_URL: t.rt.config.databaseUrl,
      },
    });
    let rt: Awaited<ReturnType<typeof openRuntime>> | undefined;
    try {
      rt = await openRuntime(config, pgSchema ? { pgSchema } : {});
    } catch (err) {
      // Stops (SQLite cannot create its WAL index, DuckDB cannot replay its WAL): the
      // error is recognised and told in one line naming the problem.
      const line = startupMessage(err, { dataDir: mountPoint, port: 0, host: '', databaseUrl: '' });
      expect(line, String(err)).toMatch(/no space left/i);
      expect(line).not.toContain('\n');
    }
    if (rt) {
      // Serves reads.
      expect((await rt.events.stats()).events).toBeGreaterThanOrEqual(160);
      await expect(rt.events.ping()).rejects.toThrow(/full/);
      await rt.close();
    }
    expect(
      startupMessage(new Error('Constraint Error'), {
        dataDir: mountPoint,
        port: 0,
        host: '',
        databaseUrl: '',
      }),
    ).toBeNull();
    rmSync(filler);
    // Reopened with room: the app serves and writes again.
    const rt2 = await openRuntime(config, pgSchema ? { pgSchema } : {});
    reopened = rt2;
    const { buildApp } = await import('../../../src/app.js');
    app = await buildApp({
      root: rt2.root,
      checks: [{ name: 'events', kind: rt2.events.kind, check: () => rt2.events.ping() }],
    });
    expect((await ingest(10, 'reopened')).statusCode).toBe(200);
    expect((await health()).statusCode).toBe(200);
  });
});

/**
 * The store fills the disk itself (the events' WAL), as a server's does: a checkpoint that
 * finds no room invalidates DuckDB's whole database, which then failed every statement
 * until a restart. A larger tmpfs, so the WAL passes the idle checkpoint's size.
 */
const bigMount = mkdtempSync(path.join(tmpdir(), 'logscope-full-wal-'));
let bigMounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', bigMount], { stdio: 'ignore' });
  bigMounted = true;
} catch {
  rmdirSync(bigMount);
}

// After each describe's own cleanup, also when a filter ran none of its tests. Lazily: the
// closed stores' files may still be open for a moment.
afterAll(() => {
  for (const [dir, isMounted] of [
    [mountPoint, mounted],
    [bigMount, bigMounted],
  ] as const) {
    if (!isMounted) continue;
    try {
      execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
      rmdirSync(dir);
    } catch {
      // left for the OS
    }
  }
});

/** Gives `mib` MiB of the filler back to the file system. */
function free(file: string, mib: number): void {
  truncateSync(file, Math.max(0, statSync(file).size - mib * 1024 * 1024));
}

describe.skipIf(!bigMounted || EVENT_STORE !== 'duckdb')(
  `a disk the event store fills itself (tmpfs) on ${BACKEND}`,
  () => {
    const filler = path.join(bigMount, 'filler');
    let t: TestApp | undefined;
    /** The app serving now, and the runtime the restart opened. */
    let app: TestApp['app'];
    let reopened: { close(): Promise<void> } | undefined;
    let ingestToken = '';
    afterAll(async () => {
      rmSync(filler, { force: true });
      if (reopened) {
        await app.close();
        await reopened.close();
        if (t) rmSync(t.dataDir, { recursive: true, force: true });
      } else await t?.close();
    });

    async function open(env: Record<string, string>): Promise<void> {
      await t?.close();
      rmSync(path.join(bigMount, 'data'), { recursive: true, force: true });
      t = await createTestApp({
        LOGSCOPE_DATA_DIR: path.join(bigMount, 'data'),
        LOGSCOPE_DUCKDB_MEMORY_LIMIT: '128MB',
        ...env,
      });
      app = t.app;
      ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' }))
        .secret_key;
    }
    /**
     * `n` events of about 1 KiB each: the WAL grows by about 1 MiB a thousand. Random, so
     * no compressor shrinks them much in the main file either (a message repeating one
     * string took ZSTD's ~1/50: ADR 0033).
     */
    const ingest = (n: number, tag: string) =>
      app.inject({
        headers: { authorization: `token ${ingestToken}` },
        method: 'POST',
        url: '/api/ingest',
        payload: Array.from({ length: n }, (_, i) => ({
          message: `${tag} ${i} ${randomBytes(740).toString('base64')}`,
          host: `h${i % 5}`,
        })),
      });
    const health = () => app.inject({ method: 'GET', url: '/api/health' });
    /** Fills the disk, leaves `leftMiB`, then ingests until the store answers 507; the events acknowledged. */
    async function ingestUntilFull(leftMiB: number): Promise<number> {
      fill(filler);
      free(filler, leftMiB);
      let acknowledged = 0;
      for (let i = 0; i < 40; i++) {
        const res = await ingest(2000, `fill${i}`);
        if (res.statusCode === 507) return acknowledged;
        expect(res.statusCode, res.body).toBe(200);
        acknowledged += 2000;
      }
      throw new Error('the disk never filled');
    }
    const total = async () => {
      const res = await app.inject({
        headers: { authorization: `token ${t?.adminToken}` },
        method: 'POST',
        url: '/api/query',
        payload: { type: 'Search', params: { time_range: { preset: 'last_hour' } } },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().results.total as number;
    };

    /**
     * Once space is freed: an ingest is accepted, health is ok, and every acknowledged event
     * is kept (pieces of a refused request committed before its failure stay stored:
     * resource-bounds.md).
     */
    async function expectRecovered(acknowledged: number, what: string): Promise<void> {
      const again = await eventually(what, async () => {
        const res = await ingest(100, 'after');
        return res.statusCode === 200 ? res : undefined;
      });
      expect(again.json().accepted).toBe(100);
      expect((await health()).statusCode).toBe(200);
      const kept = await total();
      expect(kept).toBeGreaterThanOrEqual(acknowledged + 100);
      expect(kept).toBeLessThanOrEqual(acknowledged + 100 + 2000);
    }

    it('a store DuckDB invalidated (a commit’s checkpoint found no room) is opened again once space is freed', async () => {
      // Every commit past 1 MB of WAL checkpoints inside the commit: on the full disk it fails
      // and DuckDB invalidates the database (reads included).
      await open({ LOGSCOPE_DUCKDB_CHECKPOINT_THRESHOLD: '1MB' });
      const acknowledged = await ingestUntilFull(12);
      expect((await health()).statusCode).toBe(503);
      rmSync(filler);
      await expectRecovered(acknowledged, 'an ingest accepted once space is freed');
    }, 60_000);

    it('8 MiB freed after the WAL filled the disk: ingest and health recover without a restart (no checkpoint is started without room); a restart with room reads and checkpoints the WAL', async () => {
      await open({});
      const acknowledged = await ingestUntilFull(16);
      expect(acknowledged).toBeGreaterThanOrEqual(IDLE_CHECKPOINT_WAL_BYTES / 1024 / 1024 / 1.5);
      // Appends pause: the idle checkpoint's moment passes (it found no room and invalidated
      // the database before).
      await new Promise((r) => setTimeout(r, IDLE_CHECKPOINT_MS + 1000));
      expect((await health()).statusCode).toBe(503);
      free(filler, 8);
      await expectRecovered(acknowledged, 'an ingest accepted after 8 MiB were freed');

      // Stopped with too little room to checkpoint its WAL, then started with room (64 MiB
      // free): reads answer, and the WAL DuckDB replays is checkpointed soon (its rows sat
      // in memory, spilling to the disk, until an append's checkpoint).
      const pgSchema = t?.pgSchema;
      const config = t?.rt.config;
      await t?.app.close();
      await t?.rt.close();
      const wal = path.join(bigMount, 'data', 'events.duckdb.wal');
      expect(statSync(wal).size).toBeGreaterThan(IDLE_CHECKPOINT_WAL_BYTES / 2);
      rmSync(filler);
      const { openRuntime } = await import('../../../src/runtime.js');
      const { buildApp } = await import('../../../src/app.js');
      const rt = await openRuntime(config as NonNullable<typeof config>, pgSchema ? { pgSchema } : {});
      reopened = rt;
      app = await buildApp({
        root: rt.root,
        checks: [{ name: 'events', kind: rt.events.kind, check: () => rt.events.ping() }],
      });
      expect(await total()).toBeGreaterThanOrEqual(acknowledged + 100);
      await eventually(
        'the replayed WAL checkpointed',
        () => !existsSync(wal) || statSync(wal).size < 1024 * 1024,
        {
          withinMs: IDLE_CHECKPOINT_MS + 10_000,
        },
      );
      expect((await ingest(10, 'restarted')).statusCode).toBe(200);
      expect((await health()).statusCode).toBe(200);
    }, 60_000);
  },
);
