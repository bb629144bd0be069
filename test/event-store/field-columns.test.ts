import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ulid } from 'ulidx';
import { afterEach, describe, expect, it } from 'vitest';
import type { NormalisedEvent, StoredEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { FieldColumns } from '../../src/event-store/duckdb/field-columns.js';
import type { SearchPlan, TableResult, TopNResult } from '../../src/event-store/query-plan.js';
import { EVERY_EVENT } from '../../src/event-store/read-scope.js';
import { cond, TRUE } from '../../src/filter/ast.js';
import { parseTableQuery } from '../../src/syntax/parse-query.js';
import { event } from './filter-store.js';

/**
 * Extra fields in columns of their own (field-columns.ts, ADR 0017): which fields get
 * one, and that every read gives what it gave before (events stored before the column
 * keep their value in the map, events after it in the column).
 */

const T = Date.UTC(2024, 4, 1, 10);
const RANGE = { fromMs: T - 1, toMs: T + 10_000_000 };
let dirs: string[] = [];
let stores: DuckDbEventStore[] = [];

async function open(dir = mkdtempSync(path.join(tmpdir(), 'logscope-field-columns-'))) {
  dirs.push(dir);
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '256MB',
    checkpointThreshold: '16MB',
  });
  stores.push(store);
  return { store, dir };
}

afterEach(async () => {
  for (const s of stores) await s.close().catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  stores = [];
  dirs = [];
});

/** Event `n`: `method` on every one, `trace` on a third (in the map), `rare` on one in fifty. */
function make(n: number): NormalisedEvent {
  const fields: Record<string, string> = { method: n % 3 === 0 ? 'POST' : 'GET' };
  if (n % 50 === 0) fields.rare = `r${n}`;
  if (n % 3 === 1) fields.trace = `t${n.toString(16)}`;
  // A ULID (getById reads its time): the event's receive time is within it.
  return event(ulid(T + n), { ts: T + n, message: `m ${n}`, fields });
}

const batches = (from: number, to: number, size: number) => {
  const out: NormalisedEvent[][] = [];
  for (let i = from; i < to; i += size)
    out.push(Array.from({ length: Math.min(size, to - i) }, (_, j) => make(i + j)));
  return out;
};

const search = (filter: SearchPlan['filter'], limit = 10_000): SearchPlan => ({
  kind: 'search',
  scope: EVERY_EVENT,
  filter,
  range: RANGE,
  sort: [{ field: 'ts', desc: false }],
  limit,
  offset: 0,
  count: true,
});

async function table(store: DuckDbEventStore, query: string): Promise<TableResult> {
  const { filter, program } = parseTableQuery(query);
  return (await store.execute({
    kind: 'table',
    scope: EVERY_EVENT,
    filter,
    range: RANGE,
    program,
  })) as TableResult;
}

const own = (store: DuckDbEventStore) =>
  ['method', 'rare', 'trace'].filter((k) => store.extras.columnOf(k) !== undefined);

describe('extra fields in columns of their own (DuckDB)', () => {
  it('gives a column to the fields at least half a sample carried, and reads every event as appended', async () => {
    const { store, dir } = await open();
    const appended: NormalisedEvent[] = [];
    for (const b of batches(0, 3_000, 250)) {
      await store.append(b);
      appended.push(...b);
      // Before the first sample is complete, no field has a column.
      if (appended.length < FieldColumns.SAMPLE_EVENTS) expect(own(store)).toEqual([]);
    }
    expect(own(store)).toEqual(['method']);
    const columns = await store.runSql(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'events' AND column_name LIKE 'extra_%' ORDER BY column_name`,
    );
    expect(columns.map((c) => c.column_name)).toEqual(['extra_1']);
    // The events after the sample hold their `method` in the column, not in the map.
    const split = await store.runSql(
      `SELECT count(*) FILTER (WHERE map_contains(fields, 'method')) AS in_map, count(extra_1) AS own FROM events`,
    );
    // The append that completes the sample (events 750-999) is the first into the columns.
    expect([Number(split[0]?.in_map), Number(split[0]?.own)]).toEqual([750, 2_250]);

    const all = await store.execute(search(TRUE));
    expect(all.total).toBe(3_000);
    expect(all.events.map((e) => [e.ev_id, e.fields])).toEqual(appended.map((e) => [e.ev_id, e.fields]));
    const streamed: StoredEvent[] = [];
    for await (const e of store.stream({ ...search(TRUE), count: false })) streamed.push(e);
    expect(streamed.map((e) => e.fields)).toEqual(appended.map((e) => e.fields));
    const late = appended[2_998] as NormalisedEvent;
    expect((await store.getById(late.ev_id, EVERY_EVENT))?.fields).toEqual(late.fields);

    // Filters, groups and pipes read both halves.
    const posts = appended.filter((e) => e.fields.method === 'POST');
    expect((await store.execute(search(cond('method', 'eq', 'POST')))).total).toBe(posts.length);
    expect((await store.execute(search(cond('trace', 'exists')))).total).toBe(1_000);
    expect((await store.execute(search(cond('trace', 'endswith', 'f')))).total).toBe(
      appended.filter((e) => e.fields.trace?.endsWith('f')).length,
    );
    const top = (await store.execute({
      kind: 'topn',
      scope: EVERY_EVENT,
      filter: TRUE,
      range: RANGE,
      field: 'method',
      n: 5,
    })) as TopNResult;
    expect(top.items.map((v) => [v.value, v.count])).toEqual([
      ['GET', 2_000],
      ['POST', 1_000],
    ]);
    expect((await table(store, '* | stats count() as n, count(trace) as t by method')).rows).toEqual([
      ['GET', 2_000, 1_000],
      ['POST', 1_000, 0],
    ]);

    // Reopened, the store keeps its columns and goes on appending into them.
    await store.close();
    stores = stores.filter((s) => s !== store);
    const again = (await open(dir)).store;
    expect(own(again)).toEqual(['method']);
    await again.append(batches(3_000, 3_100, 100)[0] as NormalisedEvent[]);
    expect((await again.execute(search(cond('method', 'eq', 'GET')))).total).toBe(2_000 + 66);
    const last = (await again.execute(search(TRUE, 3_100))).events[3_099];
    expect(last?.fields).toEqual(make(3_099).fields);
    expect((await again.getById(last?.ev_id as string, EVERY_EVENT))?.fields).toEqual(make(3_099).fields);
  });

  it(`gives at most ${FieldColumns.MAX} columns, the rest stay in the map; records of many fields are not counted`, async () => {
    const { store } = await open();
    // Two shapes of 20 fields each (k0-k19, k20-k39), each on half the events: 40 keys.
    const shaped = (n: number) => {
      const fields: Record<string, string> = {};
      for (let k = 0; k < 20; k++) fields[`k${(n % 2) * 20 + k}`] = `v${n}-${k}`;
      return event(ulid(T + n), { ts: T + n, fields });
    };
    // Records of more than MAX_FIELDS_COUNTED fields, before them: no column from those.
    const wide = (n: number) => {
      const fields: Record<string, string> = {};
      for (let k = 0; k <= FieldColumns.MAX_FIELDS_COUNTED; k++) fields[`w${k}`] = `v${n}-${k}`;
      return event(ulid(T + n), { ts: T + n, fields });
    };
    const events = [
      ...Array.from({ length: 1_500 }, (_, n) => wide(n)),
      ...Array.from({ length: 1_200 }, (_, n) => shaped(1_500 + n)),
    ];
    for (let i = 0; i < events.length; i += 300) {
      await store.append(events.slice(i, i + 300));
      if (i < 1_500) expect(store.extras.columnOf('w0')).toBeUndefined();
    }
    const keys = [...Array.from({ length: 40 }, (_, k) => `k${k}`), 'w0', 'w1'];
    const kept = keys.filter((k) => store.extras.columnOf(k));
    expect(kept).toHaveLength(FieldColumns.MAX);
    expect(kept.some((k) => k.startsWith('w'))).toBe(false);
    const back = await store.execute(search(TRUE, 3_000));
    expect(back.events.map((e) => e.fields)).toEqual(events.map((e) => e.fields));
  });

  it('takes any key as a column holder: quotes, other scripts, long keys, __proto__', async () => {
    const { store } = await open();
    const keys = [`we'ird "key"`, 'Ünïcode.größe', 'k'.repeat(1_000), 'Method', 'method', '__proto__'];
    const events = Array.from({ length: 1_100 }, (_, n) =>
      event(ulid(T + n), { ts: T + n, fields: Object.fromEntries(keys.map((k, i) => [k, `${i}-${n % 7}`])) }),
    );
    for (let i = 0; i < events.length; i += 550) await store.append(events.slice(i, i + 550));
    expect(keys.map((k) => store.extras.columnOf(k) !== undefined)).toEqual(keys.map(() => true));
    for (const [i, k] of keys.entries())
      expect((await store.execute(search(cond(k, 'eq', `${i}-3`)))).total).toBe(
        events.filter((e) => e.fields[k] === `${i}-3`).length,
      );
    const back = await store.execute(search(TRUE, 2_000));
    expect(back.events.map((e) => e.fields)).toEqual(events.map((e) => e.fields));
  });

  it('answers statements that run while a field gets its column as the events they read say', async () => {
    const { store } = await open();
    // Each event carries `method`; every statement's `count(method)` equals its `count()`,
    // whichever side of the column's arrival its snapshot lies.
    const appends = (async () => {
      for (const b of batches(0, 2_400, 60)) await store.append(b);
    })();
    let reads = 0;
    let done = false;
    void appends.finally(() => {
      done = true;
    });
    while (!done) {
      const [n, m] = (await table(store, '* | stats count() as n, count(method) as m')).rows[0] ?? [];
      expect(m).toBe(n);
      reads++;
    }
    await appends;
    expect(store.extras.columnOf('method')).toBeDefined();
    expect(reads).toBeGreaterThan(3);
  });

  it('goes on appending into the map when adding a column fails, and loses nothing', async () => {
    const { store } = await open();
    // A name the store will take for its first column, already in `field_columns`: the
    // column is added, then naming it breaks the table's unique constraint, and the
    // transaction is rolled back (the engine's own failure, nothing injected into the store).
    await store.runSql(`INSERT INTO field_columns VALUES ('taken', 'extra_1')`);
    const appended: NormalisedEvent[] = [];
    for (const b of batches(0, 2_500, 250)) {
      await store.append(b);
      appended.push(...b);
    }
    expect(own(store)).toEqual([]);
    const columns = await store.runSql(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'events' AND column_name LIKE 'extra_%'`,
    );
    expect(columns).toEqual([]);
    const back = await store.execute(search(TRUE));
    expect(back.total).toBe(2_500);
    expect(back.events.map((e) => [e.ev_id, e.fields])).toEqual(appended.map((e) => [e.ev_id, e.fields]));
    expect((await store.execute(search(cond('method', 'eq', 'POST')))).total).toBe(
      appended.filter((e) => e.fields.method === 'POST').length,
    );
  });
});
