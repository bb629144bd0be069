import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/cli/demo-generator.js';
import type { NormalisedEvent, StoredEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import type { QueryPlan, TimeWindow } from '../../src/event-store/query-plan.js';
import { EVERY_EVENT, type ReadScope, type StreamRules } from '../../src/event-store/read-scope.js';
import { cond, not, TRUE } from '../../src/filter/ast.js';
import { parseTableQuery } from '../../src/syntax/parse-query.js';
import { event } from './filter-store.js';

// The cold tier in the DuckDB store (ADR 0031): events moved into Parquet files are read
// by every plan exactly as before the move (both tiers as one store), by id, streamed and
// within read scopes (by filter and by stream membership); the files are plain Parquet
// that DuckDB outside the store reads with the documented schema; and a move cut short
// leaves nothing behind at the next start.

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 10);
const DAYS = 6;
const RANGE: TimeWindow = { fromMs: T0, toMs: T0 + DAYS * DAY };
const HOSTS = ['web-1', 'web-2', 'db-1'];
const APPS = ['nginx', 'postgres', 'cron'];
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'rareword'];

function events(n: number): NormalisedEvent[] {
  const rnd = prng(7);
  const out: NormalisedEvent[] = [];
  for (let i = 0; i < n; i++) {
    const ts = T0 + Math.floor(rnd() * DAYS * DAY);
    const word = i % 997 === 0 ? 'rareword' : (WORDS[Math.floor(rnd() * 4)] as string);
    out.push(
      event(ulid(ts + 1000), {
        ts,
        received_at: ts + 1000,
        host: HOSTS[i % 3] as string,
        app: APPS[Math.floor(rnd() * 3)] as string,
        severity: rnd() < 0.1 ? 'error' : 'info',
        message: `request ${word} took ${Math.floor(rnd() * 500)} ms`,
        status: rnd() < 0.2 ? 500 : 200,
        bytes: Math.floor(rnd() * 10_000),
        user: rnd() < 0.5 ? `u${Math.floor(rnd() * 40)}` : null,
        pattern_id: `p${i % 4}`,
        // A field most events carry (a column of its own once counted), and a rare one.
        fields: { region: `r${i % 5}`, ...(i % 50 === 0 ? { 'trace.id': `t${i}` } : {}) },
      }),
    );
  }
  return out;
}

const SCOPES: ReadScope[] = [
  EVERY_EVENT,
  { key: 'web', filter: cond('host', 'in', ['web-1', 'web-2']) },
  // A scope made of streams, read by stream membership once the store holds the rules.
  {
    key: 'streams-1',
    filter: cond('app', 'eq', 'nginx'),
    streams: { rules: 'rules-1', ids: [2], unclaimed: false },
  },
];
const RULES: StreamRules = {
  key: 'rules-1',
  streams: [
    { id: 2, filter: cond('app', 'eq', 'nginx') },
    { id: 3, filter: cond('region', 'eq', 'r1') },
  ],
};

function plans(scope: ReadScope): Array<[string, QueryPlan]> {
  const base = { scope, filter: TRUE, range: RANGE };
  const word = { ...base, filter: cond('message', 'contains', 'rareword') };
  const table = parseTableQuery(
    'status:500 | stats count() as n, count_distinct(user) as u by host | sort -n',
  );
  return [
    [
      'search newest',
      { ...base, kind: 'search', sort: [{ field: 'ts', desc: true }], limit: 50, offset: 0, count: true },
    ],
    [
      'search page 3 by host',
      {
        ...base,
        kind: 'search',
        sort: [
          { field: 'host', desc: false },
          { field: 'ts', desc: true },
        ],
        limit: 20,
        offset: 40,
        count: true,
      },
    ],
    [
      'search a rare word',
      { ...word, kind: 'search', sort: [{ field: 'ts', desc: true }], limit: 100, offset: 0, count: true },
    ],
    [
      'search an extra field',
      {
        ...base,
        filter: cond('region', 'eq', 'r2'),
        kind: 'search',
        sort: [{ field: 'ts', desc: false }],
        limit: 30,
        offset: 0,
        count: true,
      },
    ],
    ['topn host', { ...base, kind: 'topn', field: 'host', n: 2 }],
    ['topn region', { ...base, kind: 'topn', field: 'region', n: 10 }],
    ['lastn app', { ...base, kind: 'lastn', field: 'app', n: 5 }],
    [
      'summary',
      {
        ...base,
        kind: 'summary',
        groupBy: ['host'],
        metrics: [
          { op: 'count' },
          { op: 'count_distinct', field: 'user' },
          { op: 'p90', field: 'bytes' },
          { op: 'avg', field: 'status' },
        ],
        n: 10,
      },
    ],
    ['timeline', { ...base, kind: 'timeline', intervalMs: 6 * 3_600_000, splitBy: 'app', series: 2 }],
    [
      'patterns',
      { ...base, kind: 'patterns', n: 3, buckets: 12, compareTo: { fromMs: T0 - DAYS * DAY, toMs: T0 } },
    ],
    [
      'changes',
      {
        ...base,
        range: { fromMs: T0 + 4 * DAY, toMs: T0 + 5 * DAY },
        kind: 'changes',
        baseline: { fromMs: T0, toMs: T0 + DAY },
        fields: ['host', 'region'],
        n: 20,
        minScore: 0,
      },
    ],
    ['table', { ...base, filter: table.filter, kind: 'table', program: table.program }],
    ['fields', { ...base, kind: 'fields', sample: 5_000, top: 5 }],
  ] as Array<[string, QueryPlan]>;
}

/** Answers as plain data, with what may differ by the query's own clock left out. */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'tookMs' ? undefined : x)));

describe('the cold tier of the DuckDB store', () => {
  let dir: string;
  let store: DuckDbEventStore;
  const all = events(6_000);
  const before = new Map<string, unknown>();
  const byIdBefore: Array<StoredEvent | null> = [];
  const sample = [all[0], all[1_234], all[4_321], all[5_999]].map((e) => (e as NormalisedEvent).ev_id);
  const streamedBefore: string[] = [];
  let moved = 0;
  let statsBefore: Awaited<ReturnType<DuckDbEventStore['stats']>>;

  const open = () =>
    DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '512MB',
      checkpointThreshold: '16MB',
      coldDir: path.join(dir, 'cold'),
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-cold-'));
    store = await open();
    // In batches, as shippers send them.
    for (let i = 0; i < all.length; i += 500) await store.append(all.slice(i, i + 500));
    await store.setStreamRules(RULES);
    for (const scope of SCOPES)
      for (const [name, plan] of plans(scope))
        before.set(`${scope.key} ${name}`, plain(await store.execute(plan)));
    for (const id of sample) byIdBefore.push(await store.getById(id, EVERY_EVENT));
    for await (const e of store.stream({
      kind: 'search',
      scope: SCOPES[1] as ReadScope,
      filter: TRUE,
      range: RANGE,
      sort: [{ field: 'ts', desc: false }],
      limit: 100_000,
      offset: 0,
      count: false,
    }))
      streamedBefore.push(e.ev_id);
    statsBefore = await store.stats();
    // The first four days move: those of stream 3 (region r1) are kept hot one day more.
    const r = await store.moveCold({
      cutMs: T0 + 4 * DAY,
      keep: cond('region', 'eq', 'r1'),
      homes: RULES.streams,
      defaultId: 1,
      nowMs: Date.now(),
    });
    expect(r?.errors).toEqual([]);
    moved = r?.events ?? 0;
    const r2 = await store.moveCold({
      cutMs: T0 + 3 * DAY,
      homes: RULES.streams,
      defaultId: 1,
      nowMs: Date.now(),
    });
    expect(r2?.errors).toEqual([]);
    moved += r2?.events ?? 0;
  }, 120_000);

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('moves the events past the cut into one file per home stream and day, and leaves them hot no more', async () => {
    const expectedMoved = all.filter(
      (e) => e.ts < T0 + 3 * DAY || (e.ts < T0 + 4 * DAY && e.fields.region !== 'r1'),
    );
    expect(moved).toBe(expectedMoved.length);
    const [hot] = await store.runSql('SELECT count(*) AS n FROM events');
    expect(Number(hot?.n)).toBe(all.length - moved);
    const files = await store.coldFiles();
    expect(files.reduce((s, f) => s + f.rows, 0)).toBe(moved);
    // Home: nginx's events in stream 2, region r1's in 3, the rest in Default (1).
    expect(new Set(files.map((f) => f.streamId))).toEqual(new Set([1, 2, 3]));
    const day3 = files.filter((f) => f.day === '2026-01-12');
    // Its region r1 events moved in the second call: nginx's into stream 2's second part.
    expect(day3.map((f) => f.path).sort()).toEqual([
      '1/2026-01-12/part-0.parquet',
      '2/2026-01-12/part-0.parquet',
      '2/2026-01-12/part-1.parquet',
      '3/2026-01-12/part-0.parquet',
    ]);
    // The fourth day's region r1 events stay hot (kept by stream 3's longer hot days).
    expect(
      files
        .filter((f) => f.day === '2026-01-13')
        .map((f) => f.streamId)
        .sort(),
    ).toEqual([1, 2]);
    for (const f of files) {
      const st = statSync(path.join(dir, 'cold', f.path));
      expect(st.size).toBe(f.bytes);
      expect(st.mode & 0o777).toBe(0o600);
    }
  });

  for (const scope of SCOPES)
    for (const [name] of plans(scope))
      it(`answers ${name} (scope ${scope.key}) as before the move`, async () => {
        const plan = plans(scope).find(([n]) => n === name)?.[1] as QueryPlan;
        expect(plain(await store.execute(plan))).toEqual(before.get(`${scope.key} ${name}`));
      });

  it('gives the span of both tiers in its stats, and the hot tier’s events', async () => {
    const stats = await store.stats();
    // The oldest events are all cold: the span is the one before the move.
    expect(Math.min(...all.map((e) => e.ts))).toBeLessThan(T0 + 3 * DAY);
    expect([stats.oldestTs, stats.newestTs]).toEqual([statsBefore.oldestTs, statsBefore.newestTs]);
    expect(stats.events).toBe(all.length - moved);
  });

  it('reads moved events by id, and streams them in order', async () => {
    for (const [i, id] of sample.entries())
      expect(plain(await store.getById(id, EVERY_EVENT))).toEqual(plain(byIdBefore[i]));
    const streamed: string[] = [];
    for await (const e of store.stream({
      kind: 'search',
      scope: SCOPES[1] as ReadScope,
      filter: TRUE,
      range: RANGE,
      sort: [{ field: 'ts', desc: false }],
      limit: 100_000,
      offset: 0,
      count: false,
    }))
      streamed.push(e.ev_id);
    expect(streamed).toEqual(streamedBefore);
  });

  it('reads only the files whose summary admits a rare word: the answer holds with every other file taken away', async () => {
    const files = await store.coldFiles();
    expect(files.every((f) => f.summaryBytes > 0)).toBe(true);
    // The files that hold the word, as DuckDB outside the summaries reads them.
    const holding = new Set<string>();
    for (const f of files) {
      const [hit] = await store.runSql(
        `SELECT count(*) AS n FROM read_parquet('${path.join(dir, 'cold', f.path)}') WHERE contains(message, 'rareword')`,
        [],
      );
      if (Number(hit?.n) > 0) holding.add(f.path);
    }
    expect(holding.size).toBeGreaterThan(0);
    const others = files.filter((f) => !holding.has(f.path));
    expect(others.length).toBeGreaterThan(files.length / 2);
    const aside = path.join(dir, 'aside');
    mkdirSync(aside, { recursive: true });
    const plan = plans(EVERY_EVENT).find(([n]) => n === 'search a rare word')?.[1] as QueryPlan;
    try {
      for (const f of others)
        renameSync(path.join(dir, 'cold', f.path), path.join(aside, f.path.replaceAll('/', '_')));
      expect(plain(await store.execute(plan))).toEqual(before.get('all search a rare word'));
      // A query that needs a missing file fails, naming it, rather than answering without it.
      const every = plans(EVERY_EVENT)[0]?.[1] as QueryPlan;
      await expect(store.execute(every)).rejects.toThrow(
        /The cold tier's file \d+\/2026-01-\d+\/part-\d\.parquet is missing/,
      );
    } finally {
      for (const f of others)
        renameSync(path.join(aside, f.path.replaceAll('/', '_')), path.join(dir, 'cold', f.path));
    }
  });

  it('writes plain zstd Parquet with the documented columns, read by DuckDB outside the store', async () => {
    const files = await store.coldFiles();
    const f = files[0];
    if (!f) throw new Error('no file');
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const file = path.join(dir, 'cold', f.path);
    const schema = (
      await c.runAndReadAll(`SELECT name, type, logical_type FROM parquet_schema('${file}')`)
    ).getRowObjectsJS();
    const names = schema.map((r) => String(r.name));
    expect(names.slice(1, 21)).toEqual([
      'ev_id',
      'ts',
      'received_at',
      'stored_at',
      'host',
      'app',
      'severity',
      'facility',
      'message',
      'src_ip',
      'dst_ip',
      'user',
      'action',
      'source',
      'intake',
      'pattern_id',
      'src_port',
      'dst_port',
      'status',
      'bytes',
    ]);
    expect(names).toContain('fields');
    expect(String(schema.find((r) => r.name === 'ts')?.logical_type)).toContain('isAdjustedToUTC=1');
    const kv = (
      await c.runAndReadAll(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${file}')`)
    ).getRowObjectsJS();
    expect(kv).toEqual(
      expect.arrayContaining([
        { k: 'logscope.schema_version', v: '1' },
        { k: 'logscope.stream_id', v: String(f.streamId) },
      ]),
    );
    const codecs = (
      await c.runAndReadAll(`SELECT DISTINCT compression FROM parquet_metadata('${file}')`)
    ).getRowObjectsJS();
    expect(codecs).toEqual([{ compression: 'ZSTD' }]);
    // Every row of the day, sorted by ts then ev_id, every extra field in the map.
    const rows = (
      await c.runAndReadAll(
        `SELECT ev_id, epoch_ms(ts) AS ts, fields['region'] AS region FROM read_parquet('${file}')`,
      )
    ).getRowObjectsJS();
    expect(rows.length).toBe(f.rows);
    const sorted = [...rows].sort(
      (a, b) => Number(a.ts) - Number(b.ts) || String(a.ev_id).localeCompare(String(b.ev_id)),
    );
    expect(rows).toEqual(sorted);
    const source = new Map(all.map((e) => [e.ev_id, e]));
    for (const r of rows) {
      const e = source.get(String(r.ev_id)) as NormalisedEvent;
      expect(Number(r.ts)).toBe(e.ts);
      expect(r.region).toBe(e.fields.region);
      expect(new Date(e.ts).toISOString().slice(0, 10)).toBe(f.day);
    }
    c.closeSync();
    db.closeSync();
  });

  it('at the next start removes what a move cut short and keeps what committed', async () => {
    const files = await store.coldFiles();
    await store.close();
    const stray = path.join(dir, 'cold', '1', '2026-01-15');
    mkdirSync(stray, { recursive: true });
    writeFileSync(path.join(stray, '.part-0.parquet.tmp'), 'half written');
    writeFileSync(path.join(stray, 'part-0.parquet'), 'renamed, never committed');
    store = await open();
    // The folder they leave empty goes too.
    expect(existsSync(stray)).toBe(false);
    expect(await store.coldFiles()).toEqual(files);
    const plan = plans(EVERY_EVENT)[0]?.[1] as QueryPlan;
    expect(plain(await store.execute(plan))).toEqual(before.get('all search newest'));
    // The estimate counts both tiers after a restart.
    expect(store.estimateInRange(RANGE.fromMs, RANGE.toMs)).toBe(all.length);
  });

  it('deletes past retention from both tiers: whole files forgotten, files partly past written again', async () => {
    const cut = T0 + 1.5 * DAY;
    const keep = cond('region', 'eq', 'r1');
    const filesBefore = await store.coldFiles();
    const deleted = await store.deleteOlderThan(cut, keep);
    const gone = all.filter((e) => e.ts < cut && e.fields.region !== 'r1');
    expect(deleted).toBe(gone.length);
    const goneIds = new Set(gone.map((e) => e.ev_id));
    const left = all.filter((e) => !goneIds.has(e.ev_id));
    const count = await store.execute({
      kind: 'search',
      scope: EVERY_EVENT,
      filter: TRUE,
      range: RANGE,
      sort: [{ field: 'ts', desc: true }],
      limit: 1,
      offset: 0,
      count: true,
    });
    expect(count.total).toBe(left.length);
    expect(await store.getById((gone[0] as NormalisedEvent).ev_id, EVERY_EVENT)).toBeNull();
    const keptOld = left.find((e) => e.ts < cut) as NormalisedEvent;
    expect((await store.getById(keptOld.ev_id, EVERY_EVENT))?.ev_id).toBe(keptOld.ev_id);
    // Day one: only region r1's events are left, in stream 3's file and a new part of stream 2's.
    const files = await store.coldFiles();
    const first = files.filter((f) => f.day === '2026-01-10');
    expect(first.map((f) => f.path).sort()).toEqual([
      '2/2026-01-10/part-1.parquet',
      '3/2026-01-10/part-0.parquet',
    ]);
    expect(files.reduce((s, f) => s + f.rows, 0)).toBe(
      filesBefore.reduce((s, f) => s + f.rows, 0) - gone.filter((e) => e.ts < T0 + 4 * DAY).length,
    );
    // The files whose records went are removed at the next call (a statement may still read them).
    await store.deleteOlderThan(cut, keep);
    const onDisk = (p: string) => existsSync(path.join(dir, 'cold', p));
    for (const f of filesBefore.filter((x) => !files.some((y) => y.path === x.path)))
      expect(onDisk(f.path)).toBe(false);
    for (const f of files) expect(onDisk(f.path)).toBe(true);
  });

  it('moves nothing a keep filter holds, and a second call with nothing left moves nothing', async () => {
    const r = await store.moveCold({
      cutMs: T0 + 3 * DAY,
      keep: not(TRUE),
      homes: [],
      defaultId: 1,
      nowMs: Date.now(),
    });
    expect(r).toEqual({ files: 0, events: 0, errors: [] });
    const again = await store.moveCold({ cutMs: T0 + 3 * DAY, homes: [], defaultId: 1, nowMs: Date.now() });
    expect(again).toEqual({ files: 0, events: 0, errors: [] });
  });
});

describe('cold retention and the folders it empties', () => {
  let dir: string;
  let store: DuckDbEventStore;
  const cold = (...p: string[]) => path.join(dir, 'cold', ...p);
  const open = () =>
    DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '512MB',
      checkpointThreshold: '16MB',
      coldDir: cold(),
    });
  // Stream 1 (Default) holds web-1's events of days one and two; stream 2 db-1's of day one.
  const homes = [{ id: 2, filter: cond('host', 'eq', 'db-1') }];
  const day = (i: number) => new Date(T0 + i * DAY).toISOString().slice(0, 10);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-cold-folders-'));
    store = await open();
    const evs: NormalisedEvent[] = [];
    for (let i = 0; i < 40; i++) {
      const ts = T0 + (i % 2) * DAY + 3_600_000 + i * 1000;
      const host = i % 2 === 0 && i % 4 === 0 ? 'db-1' : 'web-1';
      evs.push(event(ulid(ts + 1000), { ts, received_at: ts + 1000, host, message: `line ${i}` }));
    }
    await store.append(evs);
    const r = await store.moveCold({ cutMs: T0 + 3 * DAY, homes, defaultId: 1, nowMs: Date.now() });
    expect(r?.errors).toEqual([]);
    expect((await store.coldFiles()).map((f) => f.path).sort()).toEqual([
      `1/${day(0)}/part-0.parquet`,
      `1/${day(1)}/part-0.parquet`,
      `2/${day(0)}/part-0.parquet`,
    ]);
  }, 60_000);

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('removes a day folder with its last file, and a stream folder left empty, never the cold directory', async () => {
    // Day one past retention: its files forgotten, removed at the next call.
    await store.deleteOlderThan(T0 + DAY);
    await store.deleteOlderThan(T0 + DAY);
    expect(existsSync(cold('1', day(0)))).toBe(false);
    expect(existsSync(cold('2', day(0)))).toBe(false);
    // Stream 2 had no other day: its folder goes too; stream 1 keeps day two.
    expect(existsSync(cold('2'))).toBe(false);
    expect(readdirSync(cold('1'))).toEqual([day(1)]);
    expect(readdirSync(cold('1', day(1)))).toEqual(['part-0.parquet']);
    // Day two forgotten, then the store restarts before another call: the start removes
    // the file no record names, and the folders it leaves empty.
    await store.deleteOlderThan(T0 + 2 * DAY);
    expect(await store.coldFiles()).toEqual([]);
    await store.close();
    store = await open();
    expect(existsSync(cold('1'))).toBe(false);
    expect(readdirSync(cold())).toEqual([]);
  });
});
