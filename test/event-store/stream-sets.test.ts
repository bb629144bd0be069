import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { CREATE_EVENTS, upgradeEventsTable } from '../../src/event-store/duckdb/duckdb-schema.js';
import { StreamSets } from '../../src/event-store/duckdb/stream-sets.js';
import type { ReadScope, StreamRules } from '../../src/event-store/read-scope.js';
import { rulesWithKey } from '../../src/features/streams/membership.js';
import { cond } from '../../src/filter/ast.js';
import { event } from './filter-store.js';

/**
 * Stream membership kept with each event (ADR 0016). Each scope below states streams that
 * disagree with its filter (which lets every event through): what a read returns shows
 * which of the two it was read by. The property test (read-scope-property.test.ts) shows
 * that, read either way, a scope sees exactly its events.
 */

const EVERYWHERE = { fromMs: -1e15, toMs: 1e15 };
const H = 3_600_000;
/** `membershipPartEvents`: events per part when new rules' bits are written (default the store's). */
const open = (dataDir: string, membershipPartEvents?: number) =>
  DuckDbEventStore.open({
    dataDir,
    memoryLimit: '256MB',
    checkpointThreshold: '16MB',
    ...(membershipPartEvents ? { membershipPartEvents } : {}),
  });

const hostRules = (...hosts: string[]): StreamRules =>
  rulesWithKey(hosts.map((h, i) => ({ id: i + 1, filter: cond('host', 'eq', h) })));

/** A scope of streams `ids` (and Default when `unclaimed`) under `rules`, whose filter takes every event. */
const scopeOf = (rules: StreamRules, ids: number[], unclaimed = false): ReadScope => ({
  key: `test:${rules.key}:${ids.join(',')}:${unclaimed}`,
  filter: cond('ev_id', 'exists'),
  streams: { rules: rules.key, ids, unclaimed },
});

async function hostsRead(store: DuckDbEventStore, scope: ReadScope): Promise<string[]> {
  const r = await store.execute({
    kind: 'topn',
    scope,
    filter: cond('ev_id', 'exists'),
    range: EVERYWHERE,
    field: 'host',
    n: 100,
  });
  return r.items.map((v) => `${v.value}:${v.count}`).sort();
}

describe('DuckDB keeps each event’s stream membership', () => {
  let dir: string;
  let store: DuckDbEventStore;
  const ab = hostRules('a', 'b');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-sets-'));
    store = await open(dir);
    await store.append(['a', 'b', 'c', 'a'].map((h, i) => event(`before-${i}`, { host: h })));
  });
  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a scope by its filter until the store holds its rules', async () => {
    expect(await hostsRead(store, scopeOf(ab, [1]))).toEqual(['a:2', 'b:1', 'c:1']);
  });

  it('reads it by membership once the stored events have it, appended ones included', async () => {
    await store.setStreamRules(ab);
    await store.append([event('after-0', { host: 'b' }), event('after-1', { host: 'c' })]);
    expect(await hostsRead(store, scopeOf(ab, [1]))).toEqual(['a:2']);
    expect(await hostsRead(store, scopeOf(ab, [2]))).toEqual(['b:2']);
    expect(await hostsRead(store, scopeOf(ab, [1, 2]))).toEqual(['a:2', 'b:2']);
    // Default: what no rule takes.
    expect(await hostsRead(store, scopeOf(ab, [], true))).toEqual(['c:2']);
    expect(await hostsRead(store, scopeOf(ab, [2], true))).toEqual(['b:2', 'c:2']);
    expect(await hostsRead(store, scopeOf(ab, []))).toEqual([]);
  });

  it('reads scopes made under other rules by their filters, and new rules by membership once written', async () => {
    const cb = hostRules('c', 'b');
    const done = store.setStreamRules(cb);
    // Old rules: the filter, at once.
    expect(await hostsRead(store, scopeOf(ab, [1]))).toEqual(['a:2', 'b:2', 'c:2']);
    await done;
    expect(await hostsRead(store, scopeOf(ab, [1]))).toEqual(['a:2', 'b:2', 'c:2']);
    expect(await hostsRead(store, scopeOf(cb, [1]))).toEqual(['c:2']);
    expect(await hostsRead(store, scopeOf(cb, [], true))).toEqual(['a:2']);
    // A stream the rules do not have: the filter.
    expect(await hostsRead(store, scopeOf(cb, [9]))).toEqual(['a:2', 'b:2', 'c:2']);
  });

  it('keeps it across a restart, writing only what was appended before the rules came', async () => {
    const cb = hostRules('c', 'b');
    await store.close();
    store = await open(dir);
    await store.append([event('reopened', { host: 'c' })]);
    expect(await hostsRead(store, scopeOf(cb, [1]))).toEqual(['a:2', 'b:2', 'c:3']);
    await store.setStreamRules(cb);
    expect(await hostsRead(store, scopeOf(cb, [1]))).toEqual(['c:3']);
    const rows = await store.runSql('SELECT count(*) AS n FROM events WHERE streams IS NULL');
    expect(Number(rows[0]?.n)).toBe(0);
  });

  it('reads by filters when there are more rules than bits', async () => {
    const many = rulesWithKey(
      Array.from({ length: StreamSets.MAX_RULES + 1 }, (_, i) => ({
        id: i + 1,
        filter: cond('host', 'eq', `h${i}`),
      })),
    );
    await store.setStreamRules(many);
    expect(await hostsRead(store, scopeOf(many, [1]))).toEqual(['a:2', 'b:2', 'c:3']);
  });

  it('writes new rules a part of the hours at a time, appends taking turns', async () => {
    const partsDir = mkdtempSync(path.join(tmpdir(), 'logscope-sets-parts-'));
    const at = (hour: number, host: string, i: number) =>
      event(`p${hour}-${host}-${i}`, { host, ts: Date.UTC(2024, 4, 1) + hour * H + i });
    const parts = await open(partsDir, 3);
    try {
      await parts.append(Array.from({ length: 6 }, (_, h) => [at(h, 'a', 0), at(h, 'b', 1)]).flat());
      await parts.setStreamRules(ab);
      const bc = hostRules('b', 'c');
      const writing = parts.setStreamRules(bc);
      // Appended while the parts are written (between two of them): written in `finish`.
      const during = parts.append([at(2, 'c', 7), at(9, 'b', 8)]);
      await Promise.all([writing, during]);
      expect(await hostsRead(parts, scopeOf(bc, [1]))).toEqual(['b:7']);
      expect(await hostsRead(parts, scopeOf(bc, [2]))).toEqual(['c:1']);
      expect(await hostsRead(parts, scopeOf(bc, [], true))).toEqual(['a:6']);
    } finally {
      await parts.close();
      rmSync(partsDir, { recursive: true, force: true });
    }
  });

  it('stops writing parts when the store closes, and writes them all when opened again', async () => {
    const dir2 = mkdtempSync(path.join(tmpdir(), 'logscope-sets-close-'));
    let s = await open(dir2, 1);
    try {
      await s.append(
        Array.from({ length: 30 }, (_, h) => event(`c${h}`, { host: h % 2 ? 'a' : 'b', ts: h * H })),
      );
      await s.setStreamRules(ab);
      const bc = hostRules('b', 'c');
      // Thirty parts: the store closes while they are being written.
      const writing = s.setStreamRules(bc);
      await s.close();
      // What was not written is left, not run against a closed store.
      await expect(writing).resolves.toBeUndefined();
      s = await open(dir2, 1);
      await s.setStreamRules(bc);
      expect(await hostsRead(s, scopeOf(bc, [1]))).toEqual(['b:15']);
      expect(await hostsRead(s, scopeOf(bc, [], true))).toEqual(['a:15']);
    } finally {
      await s.close();
      rmSync(dir2, { recursive: true, force: true });
    }
  });

  it('takes a write cut short (a crash between parts) for nothing written', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const conn = await instance.connect();
    try {
      await conn.run(CREATE_EVENTS);
      await upgradeEventsTable(conn);
      const sets = await StreamSets.open(conn, () => undefined);
      sets.use(ab);
      await sets.finish(conn, ab);
      expect(sets.stale(ab)).toBe(false);
      const cb = hostRules('c', 'b');
      sets.use(cb);
      expect(await sets.begin(conn, cb)).toBe(true);
      await sets.writePart(conn, cb, { fromMs: Number.NEGATIVE_INFINITY, toMs: 0 });
      // The process ends here. Opened again, under either rules, every part is written again.
      for (const rules of [ab, cb]) {
        const again = await StreamSets.open(conn, () => undefined);
        again.use(rules);
        expect(again.stale(rules)).toBe(true);
      }
    } finally {
      conn.closeSync();
      instance.closeSync();
    }
  });
});
