import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { ulid } from 'ulidx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import {
  buildSummary,
  type ColdSummary,
  decodeGroups,
  encodeGroups,
  GROUP_ROWS,
  groupRanges,
} from '../../src/event-store/duckdb/cold-summary.js';
import type { DuckDbDatabase } from '../../src/event-store/duckdb/duckdb-database.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { readLowering } from '../../src/event-store/duckdb/word-lowering.js';
import { blockTest, wordNeeds } from '../../src/event-store/duckdb/word-queries.js';
import type { QueryPlan, SearchResult, TimeWindow } from '../../src/event-store/query-plan.js';
import { EVERY_EVENT } from '../../src/event-store/read-scope.js';
import { cond, type FilterNode, or } from '../../src/filter/ast.js';
import { event } from './filter-store.js';

// A cold file is summarised a group of GROUP_ROWS rows at a time and written in row groups
// of that size (ADR 0031): a rare word reads the groups whose blooms may hold it, and the
// answers are those of the hot store, for words in one group, in two far apart, in most.

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 1, 3);
const RANGE: TimeWindow = { fromMs: T0, toMs: T0 + DAY };
const N = 50_000;
const ONE = 20_000;
const TWO = [3_000, 45_000];

function day(): NormalisedEvent[] {
  const out: NormalisedEvent[] = [];
  for (let i = 0; i < N; i++) {
    const ts = T0 + Math.floor((i / N) * DAY);
    const word =
      i === ONE ? 'needleone' : TWO.includes(i) ? 'needletwo' : i % 3 === 0 ? 'common' : `w${i % 7}`;
    out.push(
      event(ulid(ts + 500), {
        ts,
        received_at: ts + 500,
        host: `web-${i % 4}`,
        app: 'nginx',
        message: `request ${word} took ${i % 500} ms`,
      }),
    );
  }
  return out;
}

const search = (filter: FilterNode, desc: boolean, offset = 0): QueryPlan => ({
  kind: 'search',
  scope: EVERY_EVENT,
  filter,
  range: RANGE,
  sort: [{ field: 'ts', desc }],
  limit: 100,
  offset,
  count: true,
});

const WORDS: Array<[string, FilterNode]> = [
  ['a word in one group', cond('message', 'contains', 'needleone')],
  ['a word in two groups far apart', cond('message', 'contains', 'needletwo')],
  [
    'either rare word',
    or(cond('message', 'contains', 'needleone'), cond('message', 'contains', 'needletwo')),
  ],
  ['a word in every group', cond('message', 'contains', 'common')],
  ['a word in none', cond('message', 'contains', 'nowhereword')],
];

const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'tookMs' ? undefined : x)));

describe('a cold file read by its row groups', () => {
  let dir: string;
  let store: DuckDbEventStore;
  let file: string;
  const before = new Map<string, unknown>();
  let outside: DuckDBConnection;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-cold-groups-'));
    store = await DuckDbEventStore.open({
      dataDir: dir,
      memoryLimit: '512MB',
      checkpointThreshold: '16MB',
      coldDir: path.join(dir, 'cold'),
    });
    const all = day();
    for (let i = 0; i < all.length; i += 1_000) await store.append(all.slice(i, i + 1_000));
    for (const [name, filter] of WORDS)
      for (const desc of [true, false])
        before.set(`${name} ${desc}`, plain(await store.execute(search(filter, desc, desc ? 0 : 1))));
    const r = await store.moveCold({ cutMs: T0 + DAY, homes: [], defaultId: 1, nowMs: Date.now() });
    expect(r?.errors).toEqual([]);
    expect(r?.events).toBe(N);
    const files = await store.coldFiles();
    expect(files).toHaveLength(1);
    file = path.join(dir, 'cold', (files[0] as { path: string }).path);
    outside = await (await DuckDBInstance.create(':memory:')).connect();
  }, 120_000);

  afterAll(async () => {
    outside?.closeSync();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  for (const [name] of WORDS)
    it(`answers ${name} as the hot store did`, async () => {
      const filter = WORDS.find(([n]) => n === name)?.[1] as FilterNode;
      for (const desc of [true, false])
        expect(plain(await store.execute(search(filter, desc, desc ? 0 : 1)))).toEqual(
          before.get(`${name} ${desc}`),
        );
    });

  it('writes the file in row groups of at most GROUP_ROWS rows', async () => {
    const groups = (
      await outside.runAndReadAll(
        `SELECT row_group_id, max(row_group_num_rows) AS n FROM parquet_metadata('${file}') GROUP BY ALL`,
      )
    ).getRowObjectsJS();
    expect(groups.length).toBeGreaterThanOrEqual(Math.ceil(N / GROUP_ROWS));
    expect(groups.every((g) => Number(g.n) <= GROUP_ROWS)).toBe(true);
  });

  it('narrows a rare word to the groups that hold it, read whole a word most groups hold', async () => {
    const lowering = await readLowering(outside);
    const summary = await buildSummary(outside, file, lowering);
    expect(summary.groups).toHaveLength(Math.ceil(N / GROUP_ROWS));
    const rowsOf = async (word: string) =>
      (
        await outside.runAndReadAll(
          `SELECT file_row_number AS r FROM read_parquet('${file}', file_row_number = true) WHERE contains(message, '${word}') ORDER BY r`,
        )
      )
        .getRowObjectsJS()
        .map((x) => Number(x.r));
    const ranges = (word: string) => {
      const need = wordNeeds(cond('message', 'contains', word));
      const test = need && blockTest(need, lowering);
      return groupRanges(summary, test);
    };
    const within = (rows: number[], r: ReadonlyArray<readonly [number, number]>) =>
      rows.every((row) => r.some(([a, b]) => a <= row && row < b));

    const one = ranges('needleone');
    expect(one).toHaveLength(1);
    expect(within(await rowsOf('needleone'), one ?? [])).toBe(true);
    expect((one?.[0]?.[1] ?? 0) - (one?.[0]?.[0] ?? 0)).toBe(GROUP_ROWS);

    const two = ranges('needletwo');
    expect(two).toHaveLength(2);
    expect(within(await rowsOf('needletwo'), two ?? [])).toBe(true);

    expect(ranges('common')).toBeNull();
    expect(ranges('nowhereword')).toEqual([]);
  });

  it('leaves no word block of the moved events, and indexes a late event that comes after', async () => {
    const { words } = (store as unknown as { db: DuckDbDatabase }).db;
    // The moved day's blocks are gone: the hot table holds no candidate range of it.
    expect(words.ranges(cond('message', 'contains', 'needleone'), RANGE)).toEqual([]);
    expect(words.ranges(cond('message', 'contains', 'common'), RANGE)).toEqual([]);
    // A late event of that day arrives hot after the move: its block is the index's.
    const ts = T0 + 3_600_000;
    await store.append([event(ulid(ts + 900), { ts, received_at: ts + 900, message: 'late needlelate' })]);
    expect(words.ranges(cond('message', 'contains', 'needlelate'), RANGE)?.length).toBe(1);
    const found = await store.execute(search(cond('message', 'contains', 'needlelate'), true));
    expect((found as SearchResult).total).toBe(1);
  });

  it('keeps the groups through their stored form, and refuses a cut one', () => {
    const groups = [
      { from: 0, rows: GROUP_ROWS, bloom: Uint8Array.of(1, 2, 3) },
      { from: GROUP_ROWS, rows: 17, bloom: Uint8Array.of(255) },
    ];
    const bytes = encodeGroups(groups);
    expect(decodeGroups(bytes)).toEqual(groups);
    expect(decodeGroups(bytes.slice(0, bytes.length - 1))).toBeNull();
    const none: ColdSummary = {
      lowering: 1,
      probes: 7,
      bloom: new Uint8Array(8),
      patterns: null,
      groups: null,
    };
    expect(groupRanges(none, () => true)).toBeNull();
  });
});
