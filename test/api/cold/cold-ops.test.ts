import {
  closeSync,
  cpSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../src/core/event.js';
import { ColdJobs } from '../../../src/features/cold/cold-jobs.js';
import { StreamsRepository } from '../../../src/features/streams/index.js';
import { createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { noonDaysBack } from '../../helpers/events.js';
import { eventually } from '../../helpers/eventually.js';
import { event } from '../../helpers/seed.js';

// Verify and import of the cold tier through the API (docs/api/cold.md): a day folder of
// another server's cold tier copied in is imported, filed and read by queries; importing
// twice changes nothing; a file with some known ids is refused; paths outside the cold
// directory are refused; verify finds each kind of damage and changes nothing.

const DAY = 86_400_000;
const now = Date.now();
/** Noon (UTC) of the day `back` days ago: a day's events an hour either side stay in its file. */
const noon = (back: number) => noonDaysBack(back, now);
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface ImportJob {
  id: string;
  kind: string;
  status: string;
  files: Array<{ path: string; status: string; events: number; detail: string }>;
  events: number;
}
interface VerifyJob {
  id: string;
  kind: string;
  status: string;
  files: number;
  events: number;
  bytes: number;
  problems: Array<{ path: string; problem: string; detail: string }>;
}

/** A server whose Default stream keeps 2 days hot, holding `events` moved cold. */
async function serverWithCold(events: NormalisedEvent[], extra?: (t: TestApp) => Promise<void>) {
  const t = await createTestApp();
  await extra?.(t);
  const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json().results as Array<{
    id: number;
    builtin: boolean;
  }>;
  const defaultId = streams.find((s) => s.builtin)?.id as number;
  const res = await t.as(t.adminToken, {
    method: 'PATCH',
    url: `/api/streams/${defaultId}`,
    payload: { hot_days: 2 },
  });
  expect(res.statusCode, res.body).toBe(200);
  await t.rt.events.append(events);
  const round = await t.rt.services.coldMoves.run(now);
  expect(round.errors).toEqual([]);
  return { t, defaultId };
}

/** Every file under `dir` with its size and modification time. */
function listing(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[])
    .map((f) => {
      const s = statSync(path.join(dir, f));
      return `${f} ${s.isDirectory() ? 'dir' : s.size} ${s.mtimeMs}`;
    })
    .sort();
}

describe.skipIf(EVENT_STORE !== 'duckdb')('cold verify and import, through the API', () => {
  let t: TestApp;
  let other: TestApp;
  let coldDir: string;
  let otherCold: string;
  let defaultId: number;
  let webId: number;
  let otherDefault: number;
  let otherWeb: number;
  const mine: NormalisedEvent[] = [];
  const theirs: NormalisedEvent[] = [];
  const day4 = dayOf(noon(4));
  const post = (url: string, payload: object, token = t.adminToken) =>
    t.as(token, { method: 'POST', url, payload });
  const importing = async (payload: object) => {
    const res = await post('/api/cold/import', payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as ImportJob;
  };
  const verifying = async (payload: object = {}) => {
    const res = await post('/api/cold/verify', payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as VerifyJob;
  };
  const count = async (query: string) => {
    const res = await post('/api/query', {
      type: 'Search',
      params: {
        query,
        time_range: { ts_from: Math.floor((now - 20 * DAY) / 1000), ts_to: Math.ceil(now / 1000) },
        page_size: 500,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const q = res.json();
    expect(q.status, q.error).toBe('SUCCESS');
    return (q.results.events as Array<{ ev_id: string }>).map((e) => e.ev_id).sort();
  };

  beforeAll(async () => {
    // Days 3 to 8 back, a different number of events each (so files differ in rows).
    for (let d = 3; d <= 8; d++)
      for (let i = 0; i < 5 + d * 4; i++)
        mine.push(event({ ts: noon(d) - i * 60_000, app: 'db', message: `local job ${i} done` }));
    // The other server: the same day 4 as Default's and as a stream's of its own.
    for (let i = 0; i < 30; i++)
      theirs.push(
        event({
          ts: noon(4) - i * 60_000,
          app: i % 3 === 0 ? 'web' : 'cron',
          message: `restored archive line ${i}`,
        }),
      );
    const makeWeb = async (x: TestApp) => {
      const res = await x.as(x.adminToken, {
        method: 'POST',
        url: '/api/streams',
        payload: { title: 'Web', rule: 'app:web', hot_days: 2 },
      });
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    const [a, b] = await Promise.all([
      serverWithCold(mine, async (x) => {
        webId = await makeWeb(x);
      }),
      serverWithCold(theirs, async (x) => {
        otherWeb = await makeWeb(x);
      }),
    ]);
    ({ t, defaultId } = a);
    other = b.t;
    otherDefault = b.defaultId;
    coldDir = path.join(t.dataDir, 'cold');
    otherCold = path.join(other.dataDir, 'cold');
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await other?.close();
  });

  it('imports a day folder copied in, filed as the next parts, readable by queries', async () => {
    const records = await t.rt.events.coldFiles();
    expect(records.some((f) => f.streamId === defaultId && f.day === day4)).toBe(true);
    // Their Default's day, copied in under a folder of no stream: its metadata names the stream.
    const from = path.join(otherCold, String(otherDefault), day4);
    const to = path.join(coldDir, 'restore', day4);
    mkdirSync(path.dirname(to), { recursive: true, mode: 0o755 });
    cpSync(from, to, { recursive: true });
    const copied = readdirSync(to);
    expect(copied).toEqual(['part-0.parquet']);
    const job = await importing({ path: `restore/${day4}` });
    const cronEvents = theirs.filter((e) => e.app === 'cron');
    expect(job).toMatchObject({ kind: 'import', status: 'DONE', events: cronEvents.length });
    const part = records.filter((f) => f.streamId === defaultId && f.day === day4).length;
    expect(job.files).toEqual([
      {
        path: `restore/${day4}/part-0.parquet`,
        status: 'imported',
        events: cronEvents.length,
        detail: `Filed as ${defaultId}/${day4}/part-${part}.parquet.`,
      },
    ]);
    const filed = path.join(coldDir, String(defaultId), day4, `part-${part}.parquet`);
    expect(statSync(filed).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(filed)).mode & 0o777).toBe(0o700);
    expect(await count('restored')).toEqual(cronEvents.map((e) => e.ev_id).sort());
    const listed = (await t.as(t.adminToken, { method: 'GET', url: '/api/cold/files?page_size=500' })).json()
      .results as Array<{ path: string; rows: number; summary_bytes: number }>;
    expect(listed.find((f) => f.path === `${defaultId}/${day4}/part-${part}.parquet`)).toMatchObject({
      rows: cronEvents.length,
      summary_bytes: expect.any(Number),
    });
  });

  it('files by the path under coldDir, or by stream_id; imported twice changes nothing', async () => {
    // Their Web stream's day, copied to <our web id>/<day>/ as an absolute path.
    const to = path.join(coldDir, String(webId), day4);
    mkdirSync(to, { recursive: true });
    cpSync(path.join(otherCold, String(otherWeb), day4, 'part-0.parquet'), path.join(to, 'part-0.parquet'));
    const web = theirs.filter((e) => e.app === 'web');
    const job = await importing({ path: to });
    expect(job.files).toEqual([
      {
        path: `${webId}/${day4}/part-0.parquet`,
        status: 'imported',
        events: web.length,
        detail: `Filed under stream ${webId}.`,
      },
    ]);
    expect(await count('restored')).toEqual(theirs.map((e) => e.ev_id).sort());
    const before = await t.rt.events.coldFiles();
    const files = listing(coldDir);
    const again = await importing({ path: '.' });
    expect(again.events).toBe(0);
    expect(again.files.every((f) => f.status === 'present')).toBe(true);
    expect(again.files).toHaveLength(before.length);
    expect(await t.rt.events.coldFiles()).toEqual(before);
    expect(listing(coldDir)).toEqual(files);
    // A copy elsewhere of a file whose events are all stored: present, left where it is.
    mkdirSync(path.join(coldDir, 'again'));
    cpSync(
      path.join(otherCold, String(otherWeb), day4, 'part-0.parquet'),
      path.join(coldDir, 'again/x.parquet'),
    );
    const copy = await importing({ path: 'again/x.parquet', stream_id: defaultId });
    expect(copy.files).toEqual([
      {
        path: 'again/x.parquet',
        status: 'present',
        events: web.length,
        detail: 'Every event of it is stored already.',
      },
    ]);
    rmSync(path.join(coldDir, 'again'), { recursive: true });
  });

  it('imports another program’s file of new ids; refuses one with some ids stored, and files not of the documented schema', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    mkdirSync(path.join(coldDir, 'mixed'));
    const known = path.join(otherCold, String(otherWeb), day4, 'part-0.parquet');
    const mixed = path.join(coldDir, 'mixed', 'm.parquet');
    // Two known rows beside fresh ones (their ids changed): the documented columns, one day.
    await conn.run(
      `COPY (SELECT * REPLACE (CASE WHEN row_number() OVER () > 2 THEN ev_id || 'x' ELSE ev_id END AS ev_id)
        FROM read_parquet('${known}')) TO '${mixed}' (FORMAT parquet, COMPRESSION zstd)`,
    );
    await conn.run(
      `COPY (SELECT ev_id, ts FROM read_parquet('${known}')) TO '${path.join(coldDir, 'mixed', 'narrow.parquet')}' (FORMAT parquet)`,
    );
    writeFileSync(path.join(coldDir, 'mixed', 'junk.parquet'), 'not parquet at all');
    // Every id new, written by another program whose metadata names a stream this server
    // has not: imported into Default.
    await conn.run(
      `COPY (SELECT * REPLACE (ev_id || 'z' AS ev_id) FROM read_parquet('${known}') ORDER BY ts)
        TO '${path.join(coldDir, 'mixed', 'fresh.parquet')}' (FORMAT parquet, KV_METADATA {'logscope.stream_id': '999'})`,
    );
    conn.closeSync();
    const before = await t.rt.events.coldFiles();
    const job = await importing({ path: 'mixed' });
    const web = theirs.filter((e) => e.app === 'web').length;
    expect(job.events).toBe(web);
    expect(job.files.map((f) => [f.path, f.status, f.events])).toEqual([
      ['mixed/fresh.parquet', 'imported', web],
      ['mixed/junk.parquet', 'refused', 0],
      ['mixed/m.parquet', 'refused', web],
      ['mixed/narrow.parquet', 'refused', 0],
    ]);
    expect(job.files[2]?.detail).toBe(`2 of its ${web} events are stored already.`);
    expect(job.files[3]?.detail).toBe('It has no column received_at.');
    expect(job.files[1]?.detail).toMatch(/^Unreadable: /);
    expect(job.files[0]?.detail).toBe(`Filed as ${defaultId}/${day4}/part-2.parquet.`);
    const after = await t.rt.events.coldFiles();
    expect(after.filter((f) => !before.some((b) => b.id === f.id))).toMatchObject([
      { streamId: defaultId, rows: web },
    ]);
    const fresh = theirs.filter((e) => e.app === 'web').map((e) => `${e.ev_id}z`);
    expect(await count('restored')).toEqual([...theirs.map((e) => e.ev_id), ...fresh].sort());
    rmSync(path.join(coldDir, 'mixed'), { recursive: true });
  });

  it('refuses paths outside coldDir (400), absent ones (404), unknown streams (400) and non-admins (403)', async () => {
    const outside = path.join(t.dataDir, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, path.join(coldDir, 'link'));
    for (const p of ['../outside', outside, 'link', '/etc/passwd', `${defaultId}/../../outside`]) {
      const res = await post('/api/cold/import', { path: p });
      expect(res.statusCode, p).toBe(400);
      expect(res.json().detail).toContain('not inside the cold directory');
    }
    expect((await post('/api/cold/import', { path: 'nope/x.parquet' })).statusCode).toBe(404);
    const unknown = await post('/api/cold/import', { path: '.', stream_id: 999 });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors).toHaveProperty('stream_id');
    expect((await post('/api/cold/verify', { stream_id: 999 })).statusCode).toBe(400);
    expect((await post('/api/cold/verify', { checksums: 'yes' })).statusCode).toBe(400);
    const u = await t.user('cold-analyst');
    expect((await post('/api/cold/import', { path: '.' }, u.token)).statusCode).toBe(403);
    expect((await post('/api/cold/verify', {}, u.token)).statusCode).toBe(403);
    rmSync(path.join(coldDir, 'link'));
  });

  it('verifies a sound tier with no problem, then names each damage, changing nothing', async () => {
    const records = await t.rt.events.coldFiles();
    const sound = await verifying();
    expect(sound).toMatchObject({
      kind: 'verify',
      status: 'DONE',
      files: records.length,
      events: records.reduce((n, f) => n + f.rows, 0),
      bytes: records.reduce((n, f) => n + f.bytes, 0),
      problems: [],
    });
    const [missing, flipped, truncated, swapped, source] = records.filter((f) => f.streamId === defaultId);
    if (!missing || !flipped || !truncated || !swapped || !source) throw new Error('too few files');
    const abs = (p: string) => path.join(coldDir, ...p.split('/'));
    rmSync(abs(missing.path));
    // One byte changed inside the data: same size, another checksum.
    const fd = openSync(abs(flipped.path), 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, 100);
    writeSync(fd, Buffer.from([b[0] === 0x41 ? 0x42 : 0x41]), 0, 1, 100);
    closeSync(fd);
    truncateSync(abs(truncated.path), Math.floor(truncated.bytes / 2));
    cpSync(abs(source.path), abs(swapped.path));
    cpSync(abs(source.path), path.join(coldDir, String(defaultId), 'stray.parquet'));
    const files = listing(coldDir);
    const found = await verifying();
    const kinds = (p: string) => found.problems.filter((x) => x.path === p).map((x) => x.problem);
    expect(kinds(missing.path)).toEqual(['missing']);
    expect(kinds(flipped.path)[0]).toBe('checksum');
    expect(kinds(truncated.path)).toEqual(['size', 'unreadable']);
    expect(kinds(swapped.path)).toEqual(expect.arrayContaining(['rows', 'time_range']));
    expect(kinds(`${defaultId}/stray.parquet`)).toEqual(['not_recorded']);
    expect(found.problems.every((p) => !p.detail.includes(coldDir))).toBe(true);
    expect(kinds(source.path)).toEqual([]);
    // Without checksums, and for one stream (whose files are sound).
    const quick = await verifying({ checksums: false });
    expect(quick.problems.filter((p) => p.path === flipped.path).map((p) => p.problem)).not.toContain(
      'checksum',
    );
    const webOnly = await verifying({ stream_id: webId });
    expect(webOnly).toMatchObject({ files: 1, problems: [] });
    expect(listing(coldDir)).toEqual(files);
    expect(await t.rt.events.coldFiles()).toEqual(records);
  });

  it('answers 202 with the running job past its wait, read at /api/cold/jobs/{id}', async () => {
    const jobs = new ColdJobs(t.rt.events, new StreamsRepository(t.rt.meta.db), 0);
    const admin = { isAdmin: true } as Parameters<ColdJobs['verify']>[0];
    const { done, job } = await jobs.verify(admin, {});
    expect(done).toBe(false);
    expect(job.status).toBe('RUNNING');
    await eventually('the job ends', () => jobs.get(admin, job.id).status === 'DONE');
    expect(jobs.get(admin, job.id)).toMatchObject({ kind: 'verify', finished_at: expect.any(String) });
    // Through the API: a job the route ran is read back; an unknown one is 404.
    const ran = await verifying({ stream_id: webId });
    const read = await t.as(t.adminToken, { method: 'GET', url: `/api/cold/jobs/${ran.id}` });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual(ran);
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/cold/jobs/NOPE' })).statusCode).toBe(404);
  });

  it('records both in the audit trail', async () => {
    const trail = async (action: string) => {
      const res = await t.as(t.adminToken, {
        method: 'GET',
        url: `/api/audit?action=${action}&page_size=100`,
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().results as Array<{
        target: { kind: string; id: string | null };
        detail: Record<string, unknown>;
        outcome: string;
      }>;
    };
    const imports = await trail('cold.import');
    expect(
      imports.some(
        (r) => r.outcome === 'ok' && r.detail.path === `restore/${day4}` && r.detail.events === 20,
      ),
    ).toBe(true);
    expect(imports.some((r) => r.outcome === 'denied')).toBe(true);
    const verifies = await trail('cold.verify');
    expect(
      verifies.some(
        (r) => r.outcome === 'ok' && r.target.kind === 'cold_job' && (r.detail.problems as number) > 0,
      ),
    ).toBe(true);
  });
});
