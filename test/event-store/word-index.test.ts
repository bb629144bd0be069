import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance, DuckDBListValue } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prng } from '../../src/cli/demo-generator.js';
import type { NormalisedEvent } from '../../src/core/event.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { searchCountSql } from '../../src/event-store/duckdb/duckdb-plans.js';
import {
  BLOCK_EVENTS,
  bloomHas,
  bloomOf,
  buildWordBlocks,
  mergeBlocks,
  probeOf,
} from '../../src/event-store/duckdb/word-blocks.js';
import { WordIndex } from '../../src/event-store/duckdb/word-index.js';
import {
  KEYS_NONE,
  KEYS_PER_EVENT,
  KEYS_SOURCES,
  KEYS_VALUES,
} from '../../src/event-store/duckdb/word-keys.js';
import { type Lowering, loweringOf, readLowering } from '../../src/event-store/duckdb/word-lowering.js';
import {
  type BlockTest,
  blockTest,
  candidateRanges,
  type IndexedBlock,
  needleTrigrams,
  rangesPay,
  SOURCE_RANGE_EVENTS,
  testsWords,
  VALUE_RANGE_EVENTS,
  valuesOnly,
  wordNeeds,
} from '../../src/event-store/duckdb/word-queries.js';
import type { QueryPlan, SearchPlan, TimeWindow } from '../../src/event-store/query-plan.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import { and, cond, type FilterNode, not, or, TRUE, text } from '../../src/filter/ast.js';
import { escapeRegex } from '../../src/filter/regex.js';
import { event } from './filter-store.js';

/**
 * The word index (ADR 0004): its pure parts, and the property that matters: a store
 * answers every query the same with and without it.
 */

const BASE = Date.UTC(2024, 4, 1);
const open = (dataDir: string, wordIndex = true) =>
  DuckDbEventStore.open({ dataDir, memoryLimit: '256MB', checkpointThreshold: '16MB', wordIndex });

let instance: DuckDBInstance;
let conn: DuckDBConnection;
let lowering: Lowering;
const dirs: string[] = [];
const tmp = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logscope-words-'));
  dirs.push(dir);
  return dir;
};

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  conn = await instance.connect();
  lowering = await readLowering(conn);
});

afterAll(() => {
  conn.closeSync();
  instance.closeSync();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const trigramsOf = (bytes: Uint8Array) => {
  const s = new Set<number>();
  for (let i = 0; i + 2 < bytes.length; i++)
    s.add(((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number));
  return [...s].sort((a, b) => a - b);
};

describe('lowering', () => {
  it('is DuckDB lower(), code point by code point, read once per process', async () => {
    expect(await readLowering(conn)).toBe(lowering);
    expect(lowering.from.length).toBeGreaterThan(1000);
    const at = (cp: number) => lowering.to[lowering.from.indexOf(cp)];
    expect(at(0x41)).toBe('a');
    expect(at(0x130)).toBe('i'); // JavaScript: "i\u0307"
    expect(at(0x3a3)).toBe('σ'); // JavaScript: ς at the end of a word
    expect(lowering.from.includes(0x61)).toBe(false);
  });

  it('indexes a message as DuckDB lowers it: every trigram of lower(message) is in its block', async () => {
    const messages = [
      'Hello WORLD',
      'İSTANBUL İzmir',
      'ΟΔΥΣΣΕΥΣ',
      'Ⱥ Ⱦ ẞ K Å',
      'ǅ ǈ ﬃ',
      'Ɤ 𐲀 𞤀',
      'naïve CAFÉ 😀',
      'a\u0000b',
      '\uFEFFbom',
      'lone \ud800 surrogate',
    ];
    const [block] = buildWordBlocks(
      messages.map((message, i) => ({ ts: i, message })),
      lowering,
    );
    const reader = await conn.runAndReadAll(
      `SELECT encode(lower(m)) AS l, encode(lower(replace(m, 'İ', 'i' || chr(775)))) AS d FROM (SELECT unnest($1::VARCHAR[]) AS m)`,
      [new DuckDBListValue(messages)],
    );
    const expected = new Set<number>();
    for (const [l, d] of reader.getRows()) {
      for (const t of trigramsOf((l as { bytes: Uint8Array }).bytes)) expected.add(t);
      for (const t of trigramsOf((d as { bytes: Uint8Array }).bytes)) expected.add(t);
    }
    expect([...(block?.trigrams ?? [])]).toEqual([...expected].sort((a, b) => a - b));
  });
});

describe('blocks and blooms', () => {
  it('cuts a batch into blocks of at least BLOCK_EVENTS (one for a small batch)', () => {
    const sizes = (n: number) =>
      buildWordBlocks(
        Array.from({ length: n }, (_, i) => ({ ts: BASE + i, message: null })),
        lowering,
      ).map((b) => b.events);
    expect(sizes(0)).toEqual([]);
    expect(sizes(10)).toEqual([10]);
    expect(sizes(2 * BLOCK_EVENTS - 1)).toEqual([2 * BLOCK_EVENTS - 1]);
    expect(sizes(2 * BLOCK_EVENTS)).toEqual([BLOCK_EVENTS, BLOCK_EVENTS]);
    expect(sizes(50_000)).toEqual([8333, 8333, 8334, 8333, 8333, 8334]);
    const [b] = buildWordBlocks(
      [
        { ts: BASE + 5.4, message: 'x' },
        { ts: BASE - 3, message: 'y' },
      ],
      lowering,
    );
    expect([b?.minTs, b?.maxTs]).toEqual([BASE - 3, BASE + 5]);
  });

  it('a bloom holds every trigram it was built from and few others (about 1 %)', () => {
    const trigrams = Uint32Array.from({ length: 5000 }, (_, i) => (i * 2654435761) >>> 8).sort();
    const bloom = bloomOf(trigrams);
    expect(bloom.length).toBe(Math.ceil((5000 * 10) / 8));
    for (const t of trigrams) expect(bloomHas(bloom, 7, probeOf(Uint32Array.of(t)))).toBe(true);
    const set = new Set(trigrams);
    let hits = 0;
    let tries = 0;
    for (let t = 1; tries < 20_000; t += 7919) {
      if (set.has(t & 0xffffff)) continue;
      tries++;
      if (bloomHas(bloom, 7, probeOf(Uint32Array.of(t & 0xffffff)))) hits++;
    }
    expect(hits / tries).toBeLessThan(0.02);
  });

  it('narrows an id of hex digits, whose trigrams every block holds, by its windows (property)', () => {
    // Messages full of random hex, as shippers' are: every hex trigram is in the block.
    const hexArb = fc.stringMatching(/^[0-9a-f]{8,20}$/);
    const messageArb = fc
      .array(fc.tuple(fc.constantFrom('req=', 'id ', '/', ' span:', ' ', '-'), hexArb, fc.boolean()), {
        minLength: 1,
        maxLength: 6,
      })
      .map((parts) => parts.map(([sep, hex, upper]) => sep + (upper ? hex.toUpperCase() : hex)).join(''));
    fc.assert(
      fc.property(
        fc.array(messageArb, { minLength: 50, maxLength: 200 }),
        fc.nat(),
        fc.nat(),
        fc.nat(20),
        (messages, pick, from, len) => {
          const events = messages.map((message, i) => ({ ts: BASE + i, message }));
          const block = buildWordBlocks(events, lowering)[0] as NonNullable<
            ReturnType<typeof buildWordBlocks>[0]
          >;
          const indexed = { ...block, id: 1n, keys: block.keys } as IndexedBlock;
          // Any piece of any message is admitted, in either case: the windows never lose one.
          const m = messages[pick % messages.length] as string;
          const start = from % m.length;
          const needle = m.slice(start, start + 11 + len);
          for (const n of [needle, needle.toUpperCase()]) {
            const test = blockTest({ kind: 'word', value: n }, lowering);
            if (test) expect(test(indexed), n).toBe(true);
          }
          const exact = blockTest({ kind: 'exact', value: needle }, lowering);
          if (exact) expect(exact(indexed), needle).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
    // An id of 14 hex digits in no message: its trigrams are all there, its windows are not.
    const messages = Array.from({ length: 2000 }, (_, i) => {
      const hex = (n: number) => ((i * 2654435761 + n * 40503) >>> 0).toString(16).padStart(8, '0');
      return `GET /api/v1/cart/${hex(1)}${hex(2).slice(0, 4)} 201 req=${hex(3)}${hex(4)}`;
    });
    const block = buildWordBlocks(
      messages.map((message, i) => ({ ts: BASE + i, message })),
      lowering,
    )[0] as NonNullable<ReturnType<typeof buildWordBlocks>[0]>;
    const indexed = { ...block, id: 1n } as IndexedBlock;
    let admitted = 0;
    for (let k = 0; k < 100; k++) {
      const id = `${((k * 97_531 + 12_345) >>> 0).toString(16).padStart(8, '0')}c0ffee`;
      if ((blockTest({ kind: 'word', value: id }, lowering) as BlockTest)(indexed)) admitted++;
      // Its trigrams alone are in the block.
      expect(bloomHas(block.bloom, block.probes, probeOf(needleTrigrams(id, lowering)))).toBe(true);
    }
    expect(admitted).toBeLessThanOrEqual(3);
    // Found where it is, as a word and as a piece of a longer run.
    const some = messages[777]?.split('req=')[1] as string;
    expect((blockTest({ kind: 'word', value: some.slice(2, 15) }, lowering) as BlockTest)(indexed)).toBe(
      true,
    );
  });

  it('keeps a block of random values and runs within its bound: its source keys alone past it', () => {
    // 200 events of 40 random fields and a random run of 2,000 letters and digits each:
    // about 16,000 values and 800,000 windows, against a bound of 16 keys an event.
    const rnd = (n: number, k: number) => ((n * 2654435761 + k * 40503) >>> 0).toString(36);
    const wide = Array.from({ length: 200 }, (_, i) => ({
      ts: BASE + i,
      message: `run ${Array.from({ length: 300 }, (_, k) => rnd(i, k))
        .join('')
        .slice(0, 2000)}`,
      host: `h${i % 3}`,
      fields: Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`f${k}`, rnd(i, k + 1000)])),
    }));
    const block = buildWordBlocks(wide, lowering)[0] as NonNullable<ReturnType<typeof buildWordBlocks>[0]>;
    expect(block.keys).toBe(KEYS_SOURCES);
    // Its bloom: the trigrams (a bounded set) and 3 hosts, nothing of the values or windows.
    expect(block.trigrams.filter((t) => t >= 0x1000000).length).toBe(3);
    const indexed = { ...block, id: 1n } as IndexedBlock;
    const needs = [
      { kind: 'value', field: 'host', value: 'h1' },
      { kind: 'value', field: 'f7', value: rnd(5, 1007) },
      { kind: 'word', value: rnd(5, 3) + rnd(5, 4) },
    ] as const;
    for (const need of needs) expect((blockTest(need, lowering) as BlockTest)(indexed), need.kind).toBe(true);
    expect((blockTest({ kind: 'value', field: 'host', value: 'h9' }, lowering) as BlockTest)(indexed)).toBe(
      false,
    );
    // Grown one event at a time (a trickle into the open block), the same bound holds.
    const one = (i: number) =>
      buildWordBlocks([wide[i] as (typeof wide)[number]], lowering)[0] as typeof block;
    let grown = one(0);
    for (let i = 1; i < 200; i++) grown = mergeBlocks([grown, one(i)]);
    expect(grown.trigrams.filter((t) => t >= 0x1000000).length).toBeLessThanOrEqual(16 * 200);
    expect(grown.keys).toBe(KEYS_SOURCES);
    // A block of ordinary events keeps every value and window.
    const plainBlock = buildWordBlocks(
      Array.from({ length: 200 }, (_, i) => ({
        ts: BASE + i,
        message: `GET /x ${rnd(i, 1)}${rnd(i, 2)}`,
        user: `u${i}`,
      })),
      lowering,
    )[0] as typeof block;
    expect(plainBlock.keys).toBe(KEYS_VALUES);
  });

  it('needle trigrams: lower-cased, UTF-8 bytes, none under three bytes', () => {
    expect(needleTrigrams('ab', lowering).length).toBe(0);
    expect(needleTrigrams('é', lowering).length).toBe(0);
    expect(needleTrigrams('abc', lowering)).toEqual(Uint32Array.of(0x616263));
    expect(needleTrigrams('NEEDLE42', lowering)).toEqual(needleTrigrams('needle42', lowering));
    expect(needleTrigrams('needle42', lowering).length).toBe(6);
    expect(needleTrigrams('😀', lowering).length).toBe(2);
    // Through JavaScript's lowering (a sigma): only the stretches both lowerings agree on.
    expect(needleTrigrams('abcσxy', lowering)).toEqual(Uint32Array.of(0x616263));
    expect(needleTrigrams('ΣΑΣ', lowering).length).toBe(0);
  });
});

describe('what a filter requires (wordNeeds)', () => {
  const word = (value: string) => ({ kind: 'word', value });
  it('bare words, phrases and message contains, under AND and OR', () => {
    expect(wordNeeds(TRUE)).toBeUndefined();
    expect(wordNeeds(text('needle42'))).toEqual(word('needle42'));
    expect(wordNeeds(text('a b', true))).toEqual(word('a b'));
    expect(wordNeeds(cond('message', 'contains', 'x'))).toEqual(word('x'));
    expect(wordNeeds(and(text('a'), cond('host', 'contains', 'h'), text('b')))).toEqual({
      kind: 'all',
      items: [word('a'), word('b')],
    });
    expect(wordNeeds(and(cond('severity', 'eq', 'error'), text('a')))).toEqual(word('a'));
    expect(wordNeeds(or(text('a'), cond('message', 'contains', 'b')))).toEqual({
      kind: 'any',
      items: [word('a'), word('b')],
    });
    expect(wordNeeds(and(or(text('a'), text('b')), text('c')))).toEqual({
      kind: 'all',
      items: [{ kind: 'any', items: [word('a'), word('b')] }, word('c')],
    });
  });

  it('nothing from negations, ORs with a branch that needs none, other fields and operators', () => {
    expect(wordNeeds(not(text('a')))).toBeUndefined();
    expect(wordNeeds(cond('message', 'not_contains', 'a'))).toBeUndefined();
    expect(wordNeeds(not(cond('message', 'not_contains', 'a')))).toEqual(word('a'));
    expect(wordNeeds(or(text('a'), cond('severity', 'eq', 'error')))).toBeUndefined();
    expect(wordNeeds(cond('host', 'contains', 'a'))).toBeUndefined();
    expect(wordNeeds(cond('host', 'ne', 'a'))).toBeUndefined();
    expect(wordNeeds(not(cond('app', 'eq', 'a')))).toBeUndefined();
    expect(wordNeeds(cond('message', 'regex', 'a|needle'))).toBeUndefined();
    expect(wordNeeds(cond('message', 'regex', '(needle)'))).toBeUndefined();
    expect(wordNeeds(cond('message', 'regex', 'ne(?i)edle'))).toBeUndefined();
    expect(wordNeeds(cond('message', 'gt', 'needle'))).toBeUndefined();
    expect(wordNeeds(not(cond('message', 'eq', 'needle')))).toBeUndefined();
    expect(wordNeeds(cond('message', 'ne', 'needle'))).toBeUndefined();
  });

  it("a field's exact values: eq and in on any field compared as text, under AND and OR", () => {
    const source = (field: string, value: string) => ({ kind: 'value', field, value });
    expect(wordNeeds(cond('host', 'eq', 'web-1'))).toEqual(source('host', 'web-1'));
    expect(wordNeeds(and(text('a'), cond('host', 'eq', 'h'), cond('app', 'eq', 'sshd')))).toEqual({
      kind: 'all',
      items: [word('a'), source('host', 'h'), source('app', 'sshd')],
    });
    expect(wordNeeds(cond('app', 'in', ['a', 'b']))).toEqual({
      kind: 'any',
      items: [source('app', 'a'), source('app', 'b')],
    });
    expect(wordNeeds(or(text('a'), cond('host', 'eq', 'h')))).toEqual({
      kind: 'any',
      items: [word('a'), source('host', 'h')],
    });
    // Any text column, and any extra field (a request id, a trace id): not only sources.
    expect(wordNeeds(cond('user', 'eq', 'ada'))).toEqual(source('user', 'ada'));
    expect(wordNeeds(cond('src_ip', 'eq', '10.0.0.5'))).toEqual(source('src_ip', '10.0.0.5'));
    expect(wordNeeds(cond('trace_id', 'eq', 'ab12'))).toEqual(source('trace_id', 'ab12'));
    expect(wordNeeds(cond('http.request_id', 'in', ['r1', 7]))).toEqual({
      kind: 'any',
      items: [source('http.request_id', 'r1'), source('http.request_id', '7')],
    });
    // Numbers and times compare by value, not as text: no key can stand for them.
    expect(wordNeeds(cond('status', 'eq', 500))).toBeUndefined();
    expect(wordNeeds(cond('received_at', 'eq', 1))).toBeUndefined();
    expect(wordNeeds(cond('ev_id', 'eq', 'x'))).toBeUndefined();
    // Re-mining rewrites pattern_id in place, and severity is in every block: no keys.
    expect(wordNeeds(cond('pattern_id', 'eq', 'p1'))).toBeUndefined();
    expect(wordNeeds(cond('severity', 'eq', 'error'))).toBeUndefined();
  });

  it('every condition on message that implies a literal: as written, or case-insensitively', () => {
    const exact = (value: string) => ({ kind: 'exact', value });
    expect(wordNeeds(cond('message', 'startswith', 'GET /'))).toEqual(exact('GET /'));
    expect(wordNeeds(cond('message', 'endswith', 'done'))).toEqual(exact('done'));
    expect(wordNeeds(cond('message', 'eq', 'Needle42'))).toEqual(exact('Needle42'));
    expect(wordNeeds(cond('message', 'eq', 42))).toEqual(exact('42'));
    expect(wordNeeds(cond('message', 'in', ['abc', 'Def']))).toEqual({
      kind: 'any',
      items: [exact('abc'), exact('Def')],
    });
    // A regex's top-level literals, each as written.
    expect(wordNeeds(cond('message', 'regex', '^found (NEEDLE42|x) at \\d+$'))).toEqual({
      kind: 'all',
      items: [exact('found '), exact(' at ')],
    });
    expect(wordNeeds(cond('message', 'regex', 'needlx?42'))).toEqual({
      kind: 'all',
      items: [exact('needl'), exact('42')],
    });
    expect(wordNeeds(cond('message', 'regex', '(?s)a\\.b.*😀+'))).toEqual(exact('a.b'));
    // (?i): stretches of ASCII whose case variants are all ASCII (no k or s), as words.
    expect(wordNeeds(cond('message', 'regex', '(?is)time.*out after'))).toEqual({
      kind: 'all',
      items: [word('time'), word('out after')],
    });
    expect(wordNeeds(cond('message', 'regex', '(?i)kissé-bar'))).toEqual(word('-bar'));
  });

  it('a test that needs nothing when a needle is too short to require a trigram', () => {
    expect(blockTest({ kind: 'word', value: 'ab' }, lowering)).toBeUndefined();
    expect(
      blockTest(
        {
          kind: 'any',
          items: [
            { kind: 'word', value: 'ab' },
            { kind: 'word', value: 'abc' },
          ],
        },
        lowering,
      ),
    ).toBeUndefined();
    expect(
      blockTest(
        {
          kind: 'all',
          items: [
            { kind: 'word', value: 'ab' },
            { kind: 'word', value: 'abc' },
          ],
        },
        lowering,
      ),
    ).toBeTypeOf('function');
  });
});

describe('candidate ranges', () => {
  const block = (
    id: number,
    minTs: number,
    maxTs: number,
    extra: Partial<IndexedBlock> = {},
  ): IndexedBlock => ({
    id: BigInt(id),
    minTs,
    maxTs,
    events: 1,
    lowering: lowering.id,
    probes: 7,
    bloom: new Uint8Array(8),
    keys: KEYS_VALUES,
    stored: null,
    ...extra,
  });
  const hits =
    (...ids: number[]): BlockTest =>
    (b) =>
      ids.includes(Number(b.id));
  const all: TimeWindow = { fromMs: 0, toMs: 1e6 };

  it('joins consecutive candidates, merges overlaps, skips blocks outside the range', () => {
    const blocks = [block(1, 0, 9), block(2, 10, 19), block(3, 20, 29), block(4, 30, 39), block(5, 25, 50)];
    const apart = { joinEvents: 0 };
    expect(candidateRanges(blocks, hits(), all, apart)).toEqual([]);
    expect(candidateRanges(blocks, hits(1, 2), all, apart)).toEqual([{ fromMs: 0, toMs: 19 }]);
    expect(candidateRanges(blocks, hits(1, 3), all, apart)).toEqual([
      { fromMs: 0, toMs: 9 },
      { fromMs: 20, toMs: 29 },
    ]);
    // Block 5 starts before 4 (sorted by minTs: 1, 2, 3, 5, 4) and overlaps it.
    const sorted = [...blocks].sort((a, b) => a.minTs - b.minTs);
    expect(candidateRanges(sorted, hits(3, 4), all, apart)).toEqual([{ fromMs: 20, toMs: 39 }]);
    expect(candidateRanges(sorted, hits(1, 4), { fromMs: 10, toMs: 30 }, apart)).toEqual([]);
    expect(candidateRanges(sorted, hits(1, 4), { fromMs: 5, toMs: 31 }, apart)).toEqual([
      { fromMs: 0, toMs: 9 },
      { fromMs: 30, toMs: 39 },
    ]);
  });

  it('joins candidates with few events between them (one scan instead of two)', () => {
    const blocks = [
      block(1, 0, 9),
      block(2, 10, 19, { events: 100 }),
      block(3, 20, 29),
      block(4, 30, 39),
      block(5, 40, 49),
    ];
    expect(candidateRanges(blocks, hits(1, 3), all, { joinEvents: 100 })).toEqual([{ fromMs: 0, toMs: 29 }]);
    expect(candidateRanges(blocks, hits(1, 3), all, { joinEvents: 99 })).toHaveLength(2);
    // Two blocks between (101 events): apart.
    expect(candidateRanges(blocks, hits(1, 4), all, { joinEvents: 100 })).toHaveLength(2);
    expect(candidateRanges(blocks, hits(1, 3, 5), all)).toEqual([{ fromMs: 0, toMs: 49 }]);
  });

  it("gives a range its candidates' stored_at hull, none when one of them has no span", () => {
    const at = (from: number, to = from) => ({ stored: { from, to } });
    const blocks = [
      block(1, 0, 9, at(100)),
      block(2, 5, 19, at(500, 900)), // late events' block: overlaps 1 in time
      block(3, 20, 29, at(200)),
      block(4, 40, 49, at(300)),
      block(5, 60, 69),
      block(6, 80, 89, at(400)),
    ];
    const apart = { joinEvents: 0 };
    expect(candidateRanges(blocks, hits(1, 4), all, apart)).toEqual([
      { fromMs: 0, toMs: 9, stored: { from: 100, to: 100 } },
      { fromMs: 40, toMs: 49, stored: { from: 300, to: 300 } },
    ]);
    // Overlapping in time: one range, the hull of both spans.
    expect(candidateRanges(blocks, hits(1, 2), all, apart)).toEqual([
      { fromMs: 0, toMs: 19, stored: { from: 100, to: 900 } },
    ]);
    // Joined over a block between: the candidates' hull (block 3's events cannot match).
    expect(candidateRanges(blocks, hits(2, 4), all, { joinEvents: 1 })).toEqual([
      { fromMs: 5, toMs: 49, stored: { from: 300, to: 900 } },
    ]);
    // A block without a span (written before the store kept them): its range is by time alone.
    expect(candidateRanges(blocks, hits(4, 5), all, { joinEvents: 1 })).toEqual([{ fromMs: 40, toMs: 69 }]);
    // Capped: the ranges cut away keep their spans in the hull.
    expect(candidateRanges(blocks, hits(1, 3, 4, 6), all, { maxRanges: 2, joinEvents: 0 })).toEqual([
      { fromMs: 0, toMs: 49, stored: { from: 100, to: 300 } },
      { fromMs: 80, toMs: 89, stored: { from: 400, to: 400 } },
    ]);
  });

  it('keeps at most maxRanges ranges, cutting at the widest gaps', () => {
    const blocks = [
      block(1, 0, 1),
      block(2, 2, 3),
      block(3, 100, 101),
      block(4, 102, 103),
      block(5, 110, 111),
    ];
    expect(candidateRanges(blocks, hits(1, 3, 5), all, { maxRanges: 2, joinEvents: 0 })).toEqual([
      { fromMs: 0, toMs: 1 },
      { fromMs: 100, toMs: 111 },
    ]);
    expect(candidateRanges(blocks, hits(1, 3, 5), all, { maxRanges: 1, joinEvents: 0 })).toEqual([
      { fromMs: 0, toMs: 111 },
    ]);
  });

  it('a block without bloom, or built with another lowering, is always a candidate', () => {
    const blocks = [
      block(1, 0, 9, { bloom: null }),
      block(2, 10, 19, { lowering: lowering.id + 1 }),
      block(3, 20, 29),
    ];
    const test = blockTest({ kind: 'word', value: 'needle42' }, lowering) as BlockTest;
    expect(candidateRanges(blocks, test, all)).toEqual([{ fromMs: 0, toMs: 19 }]);
    expect(loweringOf([1], ['a']).id).not.toBe(loweringOf([1], ['b']).id);
    // A block built before the source keys may hold any source (its lowering is no matter).
    const source = blockTest({ kind: 'value', field: 'host', value: 'web-1' }, lowering) as BlockTest;
    const older = [block(4, 0, 9, { keys: KEYS_NONE }), block(5, 10, 19, { lowering: lowering.id + 1 })];
    expect(candidateRanges(older, source, all)).toEqual([{ fromMs: 0, toMs: 9 }]);
    // One built with the source keys alone (before every value, or a cold file's summary)
    // answers for a host, and may hold any other field's value.
    const user = blockTest({ kind: 'value', field: 'user', value: 'ada' }, lowering) as BlockTest;
    const sourcesOnly = [block(6, 0, 9, { keys: KEYS_SOURCES }), block(7, 10, 19)];
    expect(candidateRanges(sourcesOnly, source, all)).toEqual([]);
    expect(candidateRanges(sourcesOnly, user, all)).toEqual([{ fromMs: 0, toMs: 9 }]);
  });

  it('reads ranges only where they save more than they cost: exact source values, words', () => {
    const host = { kind: 'value', field: 'host', value: 'web-1' } as const;
    const app = { kind: 'value', field: 'app', value: 'cron' } as const;
    const both = { kind: 'all', items: [host, app] } as const;
    const many = (events: number) =>
      Array.from({ length: 10 }, (_, i) => block(i + 1, i * 10, i * 10 + 9, { events }));
    const two = [
      { fromMs: 0, toMs: 9 },
      { fromMs: 50, toMs: 59 },
    ];
    expect(valuesOnly(host) && valuesOnly(both)).toBe(true);
    expect(valuesOnly({ kind: 'all', items: [host, { kind: 'word', value: 'x' }] })).toBe(false);
    expect(valuesOnly({ kind: 'any', items: [host, app] })).toBe(false);
    // Two ranges leave 8 blocks out: they pay once those hold more than two ranges' cost.
    const small = Math.floor((2 * SOURCE_RANGE_EVENTS) / 8);
    expect(rangesPay(both, two, many(small), all)).toBe(false);
    expect(rangesPay(both, two, many(small + 1), all)).toBe(true);
    // Only the blocks in the query's range count.
    expect(rangesPay(both, two, many(small + 1), { fromMs: 0, toMs: 60 })).toBe(false);
    // No range reads nothing: it always pays.
    expect(rangesPay(both, [], many(1), all)).toBe(true);
    // A value of a field that names no source (an id) is dear to test on every event: its
    // ranges pay from far fewer events left out, and so does a need with one among others.
    const trace = { kind: 'value', field: 'trace_id', value: 'ab12' } as const;
    const few = Math.floor((2 * VALUE_RANGE_EVENTS) / 8);
    expect(rangesPay(trace, two, many(few), all)).toBe(false);
    expect(rangesPay(trace, two, many(few + 1), all)).toBe(true);
    expect(rangesPay({ kind: 'all', items: [host, trace] }, two, many(few + 1), all)).toBe(true);
    // A word is dear to test on every event: its ranges pay while they hold at most half
    // the window's events (the plain scan keeps a sorted page's own pruning).
    const word = { kind: 'word', value: 'needle42' } as const;
    expect(rangesPay(word, two, many(1), all)).toBe(true);
    const most = [
      { fromMs: 0, toMs: 49 },
      { fromMs: 70, toMs: 79 },
    ];
    expect(rangesPay(word, [{ fromMs: 0, toMs: 49 }], many(1), all)).toBe(true);
    expect(rangesPay(word, most, many(1), all)).toBe(false);
    // Only the query's range counts: from 50 ms on, they hold one block of five.
    expect(rangesPay(word, most, many(1), { fromMs: 50, toMs: 100 })).toBe(true);
    // What the page is read by (duckdb-plans.ts): a word required, not source values alone.
    expect(testsWords(cond('message', 'contains', 'needle42'))).toBe(true);
    expect(testsWords(and(cond('host', 'eq', 'web-1'), cond('message', 'contains', 'x')))).toBe(true);
    expect(testsWords(cond('host', 'eq', 'web-1'))).toBe(false);
    expect(testsWords(TRUE)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------
// Stores: with the index against without it

/** Words full of case-mapping corners: DuckDB/JavaScript differences, dotted I, multi-byte UTF-8. */
const WORDS = [
  'needle42',
  'Needle42',
  'NEEDLE42',
  'timeout',
  'Timeout after',
  'İstanbul',
  'ISTANBUL',
  'istanbul',
  'i\u0307stanbul',
  'ΟΔΥΣΣΕΥΣ',
  'σς',
  'ΑΣ',
  'Ɤ',
  'ɤabc',
  '\u{10D50}\u{10D51}', // Garay capitals (Unicode 16): JavaScript lowers them, DuckDB not
  'ẞtraße',
  'K',
  'Ⱥⱥ',
  'ǅungla',
  'ﬃx',
  'naïve',
  'CAFÉ',
  'café',
  '😀😀',
  'a\u0000b',
  '\uFEFFbom',
  'x\ud800y',
  'web-01',
  'GET /index.html',
] as const;

const tokenArb = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...WORDS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 5 }) },
);
const messageArb = fc.option(
  fc.array(tokenArb, { minLength: 1, maxLength: 6 }).map((ws) => ws.join(' ')),
  { nil: null, freq: 8 },
);

/** A needle: a piece of a stored message (any case), a pool word, or anything. */
const needleArb = (messages: readonly (string | null)[]) => {
  const present = messages.filter((m): m is string => m !== null && m.length > 0);
  const piece =
    present.length === 0
      ? fc.constantFrom(...WORDS)
      : fc
          .tuple(fc.constantFrom(...present), fc.nat(), fc.integer({ min: 1, max: 12 }), fc.nat(3))
          .map(([m, start, len, kase]) => {
            const s = m.slice(start % m.length, (start % m.length) + len);
            return kase === 1 ? s.toUpperCase() : kase === 2 ? s.toLowerCase() : s;
          });
  return fc.oneof(
    { weight: 4, arbitrary: piece },
    { weight: 2, arbitrary: fc.constantFrom(...WORDS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
  );
};

const filterArb = (needle: fc.Arbitrary<string>): fc.Arbitrary<FilterNode> =>
  fc.oneof(
    needle.map((n) => text(n)),
    needle.map((n) => cond('message', 'contains', n)),
    fc.tuple(needle, needle).map(([a, b]) => and(text(a), text(b, true))),
    fc.tuple(needle, needle).map(([a, b]) => or(text(a), cond('message', 'contains', b))),
    fc.tuple(needle, fc.constantFrom('h1', 'h2')).map(([a, h]) => and(text(a), cond('host', 'eq', h))),
    fc.tuple(needle, fc.constantFrom('h1', 'h2')).map(([a, h]) => or(text(a), cond('host', 'eq', h))),
    // The source fields' exact values (h3 and a3 are in no event).
    fc.constantFrom('h1', 'h2', 'h3').map((h) => cond('host', 'eq', h)),
    fc
      .tuple(fc.constantFrom('h1', 'h3'), fc.constantFrom('a1', 'a2', 'a3'))
      .map(([h, a]) => and(cond('host', 'eq', h), cond('app', 'eq', a))),
    fc.constantFrom('a1', 'a2', 'a3').map((a) => or(cond('app', 'eq', a), cond('host', 'in', ['h2', 'h3']))),
    fc.constantFrom('a1', 'a3').map((a) => not(cond('app', 'eq', a))),
    // Any other field's exact values: a column (user) and an extra field (req; r9 in none).
    fc.constantFrom('u1', 'u2', 'u9').map((u) => cond('user', 'eq', u)),
    fc.tuple(needle, fc.constantFrom('r1', 'r2', 'r9')).map(([a, r]) => and(text(a), cond('req', 'eq', r))),
    fc.constantFrom('r1', 'r9').map((r) => or(cond('req', 'in', [r, 'r2']), cond('user', 'eq', 'u2'))),
    needle.map((n) => not(text(n))),
    fc.tuple(needle, needle).map(([a, b]) => and(text(a), not(text(b)))),
    // Case-sensitive literals: the other conditions on message.
    needle.map((n) => cond('message', 'startswith', n)),
    needle.map((n) => cond('message', 'endswith', n)),
    needle.map((n) => cond('message', 'eq', n)),
    fc.tuple(needle, needle).map(([a, b]) => cond('message', 'in', [a, b])),
    needle.map((n) => not(cond('message', 'startswith', n))),
    // Regexes with literal parts: as a wildcard would write them, with flags, around groups.
    fc
      .tuple(
        needle,
        needle,
        fc.constantFrom('', '(?i)', '(?is)', '(?s)', '(?m)^'),
        fc.constantFrom('.*', '\\s?', '(x|y)?', '[a-z]*', ''),
      )
      .map(([a, b, flags, mid]) =>
        cond('message', 'regex', `${flags}${escapeRegex(a)}${mid}${escapeRegex(b)}`),
      ),
    needle.map((n) => and(cond('message', 'regex', escapeRegex(n)), cond('message', 'startswith', n))),
  );

/** Every kind of plan over `range` with `filter`. */
function plans(filter: FilterNode, range: TimeWindow): QueryPlan[] {
  return [
    {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      sort: [{ field: 'ts', desc: true }],
      limit: 0,
      offset: 0,
      count: true,
    },
    {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      sort: [{ field: 'ts', desc: false }],
      limit: 5,
      offset: 1,
      count: false,
    },
    // A page and its total: read page first when the index leaves few events, the total
    // taken from a page short of its limit (at its offset, or past every match).
    ...[0, 2, 6].map(
      (offset): QueryPlan => ({
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter,
        range,
        sort: [{ field: 'ts', desc: true }],
        limit: 3,
        offset,
        count: true,
      }),
    ),
    { kind: 'topn', scope: SYSTEM_SCOPE, filter, range, field: 'host', n: 3 },
    { kind: 'lastn', scope: SYSTEM_SCOPE, filter, range, field: 'host', n: 3 },
    {
      kind: 'summary',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      groupBy: ['host'],
      metrics: [{ op: 'count' }, { op: 'sum', field: 'bytes' }],
      n: 5,
    },
    { kind: 'timeline', scope: SYSTEM_SCOPE, filter, range, intervalMs: 60_000, series: 3 },
    { kind: 'timeline', scope: SYSTEM_SCOPE, filter, range, intervalMs: 600_000, splitBy: 'host', series: 1 },
  ];
}

/** Results without `stored_at` (each store stamps its own appends). */
const withoutStoredAt = (r: object) =>
  'events' in r
    ? { ...r, events: (r.events as Array<Record<string, unknown>>).map(({ stored_at: _, ...e }) => e) }
    : r;

async function sameAnswers(a: DuckDbEventStore, b: DuckDbEventStore, filter: FilterNode, range: TimeWindow) {
  for (const plan of plans(filter, range)) {
    const [x, y] = (await Promise.all([a.execute(plan), b.execute(plan)])).map(withoutStoredAt);
    expect(x, `${plan.kind} ${JSON.stringify(filter)}`).toEqual(y);
  }
}

/** The number of rows a plan's count matches, with the index, as the API would see it. */
const count = async (
  store: DuckDbEventStore,
  filter: FilterNode,
  range: TimeWindow = { fromMs: 0, toMs: 4e12 },
) =>
  (
    await store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter,
      range,
      sort: [],
      limit: 0,
      offset: 0,
      count: true,
    })
  ).total;

const timed = (i: number, message: string | null, extra: Partial<NormalisedEvent> = {}) =>
  event(`w${String(i).padStart(7, '0')}`, {
    ts: BASE + i * 1000,
    received_at: BASE + i * 1000,
    message,
    ...extra,
  });

describe('a store answers the same with and without the word index', () => {
  let indexed: DuckDbEventStore;
  let plain: DuckDbEventStore;
  beforeAll(async () => {
    [indexed, plain] = await Promise.all([open(':memory:'), open(':memory:', false)]);
  });
  afterAll(async () => {
    await Promise.all([indexed.close(), plain.close()]);
  });

  it('on random messages, batches and words (property)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            messageArb,
            fc.constantFrom('h1', 'h2', null),
            fc.nat(59_000),
            fc.constantFrom('a1', 'a2', null),
          ),
          {
            minLength: 1,
            maxLength: 40,
          },
        ),
        fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 4 }),
        async (rows, cuts) => {
          // Each run has its own hour, so runs never see each other's events.
          const hour = BASE + run++ * 3_600_000;
          const events = rows.map(([message, host, offset, app], i) =>
            event(`p${run}-${i}`, {
              ts: hour + offset + i * 1000,
              received_at: hour,
              message,
              host,
              app,
              bytes: i,
              user: i % 3 === 0 ? null : `u${i % 3}`,
              fields: i % 4 === 0 ? {} : { req: `r${i % 4}` },
            }),
          );
          for (let at = 0, k = 0; at < events.length; k++) {
            const part = events.slice(at, at + (cuts[k % cuts.length] as number));
            at += part.length;
            await Promise.all([indexed.append(part), plain.append(part)]);
          }
          const range = { fromMs: hour, toMs: hour + 3_600_000 };
          const filters = fc.sample(filterArb(needleArb(rows.map((r) => r[0]))), { numRuns: 4, seed: run });
          for (const filter of filters) await sameAnswers(indexed, plain, filter, range);
        },
      ),
      { numRuns: 60 },
    );
    // About 6 s alone; the suite's other files share the two cores.
  }, 60_000);

  it("narrows a rare value of any field to its blocks: a column, an extra field's column or its map", async () => {
    const start = 4_000_000;
    const n = 4 * BLOCK_EVENTS + 100;
    // trace_id on every event (a column of its own once sampled), order on one in 3,000 (in
    // the map), src_ip an address column, user a text column of a few common values.
    const events = Array.from({ length: n }, (_, i) =>
      timed(start + i, `GET /item/${i % 97}`, {
        user: `u${i % 5}`,
        src_ip: `10.0.${i % 7}.${i % 251}`,
        fields: {
          trace_id: `t${(i * 7919).toString(16)}`,
          ...(i % 3000 === 1234 ? { order: `o-${i}` } : {}),
        },
      }),
    );
    await Promise.all([indexed.append(events), plain.append(events)]);
    const range = { fromMs: BASE + start * 1000, toMs: BASE + (start + n) * 1000 };
    const words = (indexed as unknown as { words: WordIndex }).words;
    // Its candidate ranges (on four blocks, a scan costs less than a range: `rangesPay`).
    const width = (filter: FilterNode) =>
      (words.ranges(filter, range) ?? [range]).reduce((w, r) => w + r.toMs - r.fromMs, 0);
    for (const [filter, matches] of [
      [cond('trace_id', 'eq', `t${(20_000 * 7919).toString(16)}`), 1],
      [cond('trace_id', 'in', [`t${(5 * 7919).toString(16)}`, 'absent']), 1],
      [cond('order', 'eq', 'o-31234'), 1],
      [and(text('item'), cond('order', 'eq', 'o-1234')), 1],
    ] as const) {
      expect(await count(indexed, filter, range), JSON.stringify(filter)).toBe(matches);
      expect(await count(plain, filter, range)).toBe(matches);
      // One block of the four read, not the window.
      expect(width(filter), JSON.stringify(filter)).toBeLessThan((range.toMs - range.fromMs) / 2);
    }
    // A value no event holds reads nothing; a common one reads the window, as before.
    expect(words.ranges(cond('order', 'eq', 'o-1'), range)).toEqual([]);
    expect(words.ranges(cond('trace_id', 'eq', 'nothing'), range)).toEqual([]);
    for (const filter of [
      cond('user', 'eq', 'u3'),
      cond('src_ip', 'eq', '10.0.3.3'),
      cond('src_ip', 'eq', '10.0.3.250'),
      and(cond('user', 'eq', 'u1'), cond('order', 'eq', 'o-4234')),
      or(cond('order', 'eq', 'o-7234'), cond('trace_id', 'eq', 't0')),
      not(cond('order', 'eq', 'o-7234')),
    ])
      await sameAnswers(indexed, plain, filter, range);
  });

  it('narrows a rare word to its blocks, and finds it wherever it is', async () => {
    const start = 1_000_000;
    const events = Array.from({ length: 4 * BLOCK_EVENTS + 100 }, (_, i) =>
      timed(start + i, i % 9000 === 4321 ? `found NEEDLE42 at ${i}` : `GET /index.html ${i}`),
    );
    await Promise.all([indexed.append(events), plain.append(events)]);
    const range = { fromMs: BASE + start * 1000, toMs: BASE + (start + events.length) * 1000 };
    expect(await count(indexed, text('needle42'), range)).toBe(4);
    // Every predicate on message that implies a literal reads only the blocks that may
    // hold it (one match: one block of the four, give or take a false positive), reads
    // nothing when no block holds it, and answers as the plain store.
    const words = (indexed as unknown as { words: WordIndex }).words;
    const width = (filter: FilterNode) =>
      (words.ranges(filter, range) ?? [range]).reduce((w, r) => w + r.toMs - r.fromMs, 0);
    for (const [filter, n] of [
      [cond('message', 'startswith', 'found NEEDLE42'), 4],
      [cond('message', 'regex', '^found NEEDLE\\d+ at'), 4],
      [cond('message', 'eq', 'found NEEDLE42 at 13321'), 1],
      [cond('message', 'in', ['found NEEDLE42 at 4321', 'nowhere at all']), 1],
      [cond('message', 'endswith', 'NEEDLE42 at 22321'), 1],
      [cond('message', 'regex', '(?is)needle.* at 31321'), 1],
    ] as const) {
      expect(await count(indexed, filter, range), JSON.stringify(filter)).toBe(n);
      expect(await count(plain, filter, range)).toBe(n);
      if (n === 1)
        expect(width(filter), JSON.stringify(filter)).toBeLessThan((range.toMs - range.fromMs) / 2);
    }
    for (const filter of [
      cond('message', 'startswith', 'found NEEDLE43'),
      cond('message', 'endswith', 'NEEDLE43'),
      cond('message', 'eq', 'NEEDLE43'),
      cond('message', 'in', ['NEEDLE43', 'found zzz']),
      cond('message', 'regex', '^found NEEDLE43'),
      cond('message', 'regex', '(?i)^found.*zzz'),
    ])
      expect(words.ranges(filter, range), JSON.stringify(filter)).toEqual([]);
    for (const filter of [
      text('needle42'),
      text('Needle42 at 1'),
      and(text('needle42'), text('found')),
      or(text('needle42'), text('index.html 7')),
      text('absent-word'),
      text('index'),
    ])
      await sameAnswers(indexed, plain, filter, range);
    // Exports stream through the same narrowing.
    const ids = async (store: DuckDbEventStore, filter: FilterNode) => {
      const out: string[] = [];
      const plan = {
        kind: 'search',
        scope: SYSTEM_SCOPE,
        filter,
        range,
        sort: [{ field: 'ts', desc: true }],
        limit: 1e6,
        offset: 0,
        count: false,
      } satisfies SearchPlan;
      for await (const e of store.stream(plan)) out.push(e.ev_id);
      return out;
    };
    for (const filter of [text('needle42'), or(text('needle42'), text('index.html 3333'))]) {
      const got = await ids(indexed, filter);
      expect(got.length).toBeGreaterThan(3);
      expect(got).toEqual(await ids(plain, filter));
    }
    // The SQL is narrowed: the always-false condition for a word that no block holds.
    const plan = {
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: text('absent-word'),
      range,
      sort: [],
      limit: 0,
      offset: 0,
      count: true,
    };
    expect(searchCountSql(plan as never, { words: [] }).sql).toContain('WHERE false');
  });

  it("narrows a source's exact value (host, app) to the blocks that hold it", async () => {
    const start = 2_000_000;
    const events = Array.from({ length: 4 * BLOCK_EVENTS }, (_, i) => ({
      ...timed(start + i, `line ${i}`),
      host: i === 2 * BLOCK_EVENTS + 7 ? 'rare-host' : `web-${i % 3}`,
      app: i % 2 ? 'nginx' : 'api',
    }));
    await Promise.all([indexed.append(events), plain.append(events)]);
    const range = { fromMs: BASE + start * 1000, toMs: BASE + (start + events.length) * 1000 };
    const words = (indexed as unknown as { words: WordIndex }).words;
    const width = (filter: FilterNode) =>
      (words.ranges(filter, range) ?? [range]).reduce((w, r) => w + r.toMs - r.fromMs, 0);
    const rare = and(cond('host', 'eq', 'rare-host'), cond('app', 'eq', 'nginx'));
    expect(await count(indexed, rare, range)).toBe(1);
    expect(width(rare)).toBeLessThan((range.toMs - range.fromMs) / 2);
    // Values no event holds: a bloom's false positives aside (each value two keys, about 1 in
    // 20,000 blocks), nothing is read.
    const absent = Array.from({ length: 100 }, (_, i) => [
      cond('host', 'eq', `nowhere-${i}`),
      cond('app', 'in', [`no-app-${i}`, `none-${i}`]),
    ]).flat();
    const read = absent.map((f) => words.ranges(f, range)?.length ?? 4).reduce((a, b) => a + b, 0);
    expect(read).toBeLessThanOrEqual(1);
    // A value every block holds narrows nothing, and answers as the plain store.
    expect(width(cond('host', 'eq', 'web-1'))).toBeGreaterThan((range.toMs - range.fromMs) / 2);
    for (const filter of [
      rare,
      cond('host', 'eq', 'web-1'),
      cond('app', 'in', ['api', 'x']),
      cond('host', 'eq', 'nowhere'),
    ])
      await sameAnswers(indexed, plain, filter, range);
  });

  it("stores a batch's rows source by source, each in time order, and answers as before", async () => {
    const [store, reference] = await Promise.all([open(':memory:'), open(':memory:', false)]);
    try {
      // Three sources interleaved, times shuffled within the batch.
      const events = Array.from({ length: 300 }, (_, i) =>
        timed((i * 7919) % 300, `line ${i}`, { host: `h${i % 3}`, app: i % 2 ? 'a' : 'b' }),
      );
      await store.append(events);
      const stored = await store.runSql('SELECT host, app, epoch_ms(ts) AS ts FROM events ORDER BY rowid');
      const keys = stored.map((r) => `${r.host}/${r.app}`);
      // Each source's rows are one run, in time order.
      const runs = keys.filter((k, i) => i === 0 || k !== keys[i - 1]);
      expect(runs.length).toBe(6);
      expect(new Set(runs).size).toBe(6);
      for (const k of runs) {
        const times = stored.filter((r) => `${r.host}/${r.app}` === k).map((r) => Number(r.ts));
        expect(times).toEqual([...times].sort((a, b) => a - b));
      }
      // The same events appended a few at a time (another physical order) answer the same.
      for (let at = 0; at < events.length; at += 7) await reference.append(events.slice(at, at + 7));
      const all = { fromMs: 0, toMs: 4e12 };
      for (const filter of [TRUE, cond('host', 'eq', 'h1'), and(cond('app', 'eq', 'a'), text('line'))])
        await sameAnswers(store, reference, filter, all);
    } finally {
      await Promise.all([store.close(), reference.close()]);
    }
  });

  it("stores a large append's rows block by block: each block's time slice is one run of rows", async () => {
    const [store, reference] = await Promise.all([open(':memory:'), open(':memory:', false)]);
    try {
      // Three blocks' worth, four sources interleaved, times shuffled.
      const n = 3 * BLOCK_EVENTS + 100;
      const events = Array.from({ length: n }, (_, i) =>
        timed((i * 7919) % n, `line ${i}`, { host: `h${i % 4}` }),
      );
      await store.append(events);
      const blocks = (
        await store.runSql(
          'SELECT epoch_ms(min_ts) AS lo, epoch_ms(max_ts) AS hi FROM word_blocks ORDER BY min_ts',
        )
      ).map((b) => [Number(b.lo), Number(b.hi)] as const);
      expect(blocks).toHaveLength(3);
      const stored = await store.runSql('SELECT host, epoch_ms(ts) AS ts FROM events ORDER BY rowid');
      const blockOf = (ts: number) => blocks.findIndex(([lo, hi]) => ts >= lo && ts <= hi);
      const order = stored.map((r) => blockOf(Number(r.ts)));
      // The rows of block 0, then of block 1, then of block 2.
      expect(order.filter((b, i) => i === 0 || b !== order[i - 1])).toEqual([0, 1, 2]);
      // Within each block, source by source (4 runs), each in time order.
      for (let b = 0; b < 3; b++) {
        const rows = stored.filter((_r, i) => order[i] === b);
        const hosts = rows.map((r) => r.host);
        expect(hosts.filter((h, i) => i === 0 || h !== hosts[i - 1])).toHaveLength(4);
      }
      await reference.append(events);
      const all = { fromMs: 0, toMs: 4e12 };
      for (const filter of [TRUE, cond('host', 'eq', 'h1'), text('line 77')])
        await sameAnswers(store, reference, filter, all);
    } finally {
      await Promise.all([store.close(), reference.close()]);
    }
  });

  it('small batches grow one open block until it holds BLOCK_EVENTS (across reopening too)', async () => {
    const dir = tmp();
    let small = await open(dir);
    const reference = await open(':memory:', false);
    const rowsOf = async () =>
      (await small.runSql('SELECT id, events FROM word_blocks ORDER BY min_ts, events')).map((r) => [
        Number(r.id),
        r.events,
      ]);
    try {
      const events = Array.from({ length: BLOCK_EVENTS + 500 }, (_, i) =>
        timed(i, i === 777 ? 'small batch needle42' : `small ${i}`),
      );
      const appendBoth = async (part: NormalisedEvent[]) => {
        await Promise.all([small.append(part), reference.append(part)]);
      };
      for (let at = 0; at < 3 * 700; at += 700) await appendBoth(events.slice(at, at + 700));
      // Three versions of one block's row (the newest covers the others).
      expect(await rowsOf()).toEqual([
        [1, 700],
        [1, 1400],
        [1, 2100],
      ]);
      expect(await count(small, text('needle42'))).toBe(1);
      for (let at = 3 * 700; at < events.length; at += 700) await appendBoth(events.slice(at, at + 700));
      // 13 appends: the first 12 filled the block (8,400 ≥ 8,192 events; its older rows
      // deleted), the 13th opened the next.
      expect(await rowsOf()).toEqual([
        [1, 8400],
        [2, 292],
      ]);
      for (const filter of [text('needle42'), text('small 9'), text('small 8999'), text('small 8499')])
        await sameAnswers(small, reference, filter, { fromMs: 0, toMs: 4e12 });
      expect(await count(small, text('small batch needle42'))).toBe(1);
      expect(await count(small, text('small 8500'))).toBe(1);
      // Another version of block 2, then a restart: the older version goes, and the next
      // small batch opens a new block (the trigrams of the open one were in memory only).
      const more = Array.from({ length: 10 }, (_, i) => timed(events.length + i, `after needle42 ${i}`));
      await appendBoth(more.slice(0, 5));
      await small.close();
      small = await open(dir);
      expect(await rowsOf()).toEqual([
        [1, 8400],
        [2, 297],
      ]);
      await appendBoth(more.slice(5));
      expect(await rowsOf()).toEqual([
        [1, 8400],
        [2, 297],
        [3, 5],
      ]);
      for (const filter of [text('needle42'), text('after needle42 7'), text('small 8999')])
        await sameAnswers(small, reference, filter, { fromMs: 0, toMs: 4e12 });
    } finally {
      await Promise.all([small.close(), reference.close()]);
    }
  });

  it('keeps at most TAIL_VERSIONS rows of the open block', async () => {
    const store = await open(':memory:');
    try {
      for (let i = 0; i < 40; i++) await store.append([timed(i, `tiny ${i}`)]);
      const rows = await store.runSql('SELECT count(*) AS n, max(events) AS e FROM word_blocks');
      expect(Number(rows[0]?.n)).toBeLessThanOrEqual(16);
      expect(Number(rows[0]?.e)).toBe(40);
      expect(await count(store, text('tiny 39'))).toBe(1);
    } finally {
      await store.close();
    }
  });

  it("late events grow their time bucket's block: at most TAIL_VERSIONS rows of it, found across reopening", async () => {
    const dir = tmp();
    let store = await open(dir);
    const reference = await open(':memory:', false);
    const both = async (part: NormalisedEvent[]) => {
      await Promise.all([store.append(part), reference.append(part)]);
    };
    const blocksOf = (s: DuckDbEventStore) => (s as unknown as { words: WordIndex }).words.size.blocks;
    const all = { fromMs: 0, toMs: 4e12 };
    try {
      // A block closed (2.3 hours of events): events over a minute before its end are late.
      await both(Array.from({ length: BLOCK_EVENTS }, (_, i) => timed(i, `in order ${i}`)));
      // 40 small batches: an event in order and one 1.9 hours late, all of one 15-minute bucket.
      for (let k = 0; k < 40; k++)
        await both([timed(BLOCK_EVENTS + k, `newer ${k}`), timed(1_200 + k, `late needle ${k}`)]);
      // The closed block, the open one, the late events' one (was a block per batch: 42).
      expect(blocksOf(store)).toBe(3);
      const rows = await store.runSql(
        'SELECT id, count(*) AS n, max(events) AS e FROM word_blocks GROUP BY id',
      );
      expect(rows.map((r) => Number(r.n)).every((n) => n <= 16)).toBe(true);
      expect(rows.map((r) => Number(r.e)).sort((a, b) => a - b)).toEqual([40, 40, BLOCK_EVENTS]);
      expect(await count(store, text('late needle'))).toBe(40);
      for (const filter of [text('late needle 17'), text('newer 39'), text('in order 1217')])
        await sameAnswers(store, reference, filter, all);
      // Reopened: the newest version of each block; a late event of the same bucket opens
      // a new block (the trigrams of the open ones were in memory only).
      await store.close();
      store = await open(dir);
      expect(blocksOf(store)).toBe(3);
      await both([timed(BLOCK_EVENTS + 40, 'newer 40'), timed(1_250, 'late needle 50')]);
      expect(blocksOf(store)).toBe(4);
      expect(await count(store, text('late needle'))).toBe(41);
      for (const filter of [text('late needle 5'), text('late needle 39'), text('newer 40')])
        await sameAnswers(store, reference, filter, all);
    } finally {
      await Promise.all([store.close(), reference.close()]);
    }
  });

  it('keeps answers consistent while appends run (ranges are taken with the snapshot)', async () => {
    const start = 3_000_000;
    const batch = 2 * BLOCK_EVENTS;
    const counts: number[] = [];
    const writes: Promise<unknown>[] = [];
    for (let k = 0; k < 4; k++) {
      // Three matches per batch, in both of its blocks.
      const events = Array.from({ length: batch }, (_, i) =>
        timed(start + k * batch + i, i % 6000 === 5 ? `racing needle77 ${k}` : `filler ${i}`),
      );
      writes.push(indexed.append(events));
      counts.push(await count(indexed, text('needle77')));
    }
    await Promise.all(writes);
    counts.push(await count(indexed, text('needle77')));
    for (const c of counts) expect(c % 3).toBe(0);
    expect(counts.at(-1)).toBe(12);
  });
});

describe('a store on disk', () => {
  const range = { fromMs: 0, toMs: 4e12 };
  // Four blocks; the word in the first and the last (too far apart to be joined).
  const events = Array.from({ length: 4 * BLOCK_EVENTS }, (_, i) =>
    timed(i, i === 100 || i === 30_000 ? `rare Needle42 ${i}` : `line ${i}`),
  );

  it('reloads its blocks when reopened', async () => {
    const dir = tmp();
    let store = await open(dir);
    await store.append(events);
    await store.close();
    store = await open(dir);
    try {
      expect(Number((await store.runSql('SELECT count(*) AS n FROM word_blocks'))[0]?.n)).toBe(4);
      expect(await count(store, text('needle42'))).toBe(2);
      // Events that bypass the index (written by hand) are not candidates: the index is in use.
      await store.runSql(
        `INSERT INTO events SELECT * REPLACE ('sneaky needle42' AS message) FROM events WHERE ev_id = $1`,
        ['w0012000'],
      );
      expect(await count(store, text('needle42'))).toBe(2);
    } finally {
      await store.close();
    }
    const plain = await open(dir, false);
    try {
      expect(await count(plain, text('needle42'), range)).toBe(3);
    } finally {
      await plain.close();
    }
  });

  it('a store from before the index: one block without bloom spans its events', async () => {
    const dir = tmp();
    let store = await open(dir);
    await store.append(events);
    await store.close();
    {
      const db = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
      const c = await db.connect();
      await c.run('DROP TABLE word_blocks');
      c.closeSync();
      db.closeSync();
    }
    store = await open(dir);
    try {
      const blocks = await store.runSql(
        'SELECT epoch_ms(min_ts)::DOUBLE AS lo, epoch_ms(max_ts)::DOUBLE AS hi, events, format, bloom IS NULL AS none FROM word_blocks',
      );
      expect(blocks).toEqual([
        { lo: BASE, hi: BASE + (events.length - 1) * 1000, events: events.length, format: 0, none: true },
      ]);
      expect(await count(store, text('needle42'))).toBe(2);
      // New events are indexed as usual; the old ones stay found.
      await store.append([timed(events.length + 5, 'new needle42')]);
      expect(await count(store, text('needle42'))).toBe(3);
      expect(await count(store, text('zzz-absent'))).toBe(0);
    } finally {
      await store.close();
    }
    // Reopened: the block without bloom is not added again.
    store = await open(dir);
    try {
      expect(Number((await store.runSql('SELECT count(*) AS n FROM word_blocks'))[0]?.n)).toBe(2);
      expect(await count(store, text('needle42'))).toBe(3);
    } finally {
      await store.close();
    }
  });

  it("blocks from before stored_at spans: read by time alone, new blocks get their appends' span", async () => {
    const dir = tmp();
    let store = await open(dir);
    await store.append(events);
    await store.close();
    {
      const db = await DuckDBInstance.create(path.join(dir, 'events.duckdb'));
      const c = await db.connect();
      await c.run('ALTER TABLE word_blocks DROP COLUMN min_stored');
      await c.run('ALTER TABLE word_blocks DROP COLUMN max_stored');
      c.closeSync();
      db.closeSync();
    }
    store = await open(dir);
    try {
      expect(await count(store, text('needle42'))).toBe(2);
      await store.append([timed(events.length + 5, 'new needle42')]);
      expect(await count(store, text('needle42'))).toBe(3);
      const spans = await store.runSql(
        `SELECT epoch_ms(min_stored)::DOUBLE AS lo, epoch_ms(max_stored)::DOUBLE AS hi FROM word_blocks ORDER BY id`,
      );
      const [stored] = await store.runSql(
        `SELECT epoch_ms(max(stored_at))::DOUBLE AS at FROM events WHERE message LIKE 'new needle42%'`,
      );
      // The old rows' spans are unknown; the new append's is its stored_at.
      expect(spans.slice(0, -1).every((r) => r.lo === null && r.hi === null)).toBe(true);
      expect(spans.at(-1)).toEqual({ lo: stored?.at, hi: stored?.at });
    } finally {
      await store.close();
    }
  });

  it('retention deletes the blocks whose events are all gone', async () => {
    const dir = tmp();
    const store = await open(dir);
    const plain = await open(':memory:', false);
    try {
      await Promise.all([store.append(events), plain.append(events)]);
      const blocks = async () =>
        (await store.runSql('SELECT epoch_ms(max_ts) AS hi FROM word_blocks ORDER BY hi')).map((r) =>
          Number(r.hi),
        );
      const [first, second] = await blocks();
      // Cut inside the second block: the first goes, the second stays (it holds later events).
      const cut = (second as number) - 10_000;
      expect(await store.deleteOlderThan(cut)).toBe(await plain.deleteOlderThan(cut));
      expect(await blocks()).not.toContain(first);
      expect((await blocks()).length).toBe(3);
      for (const filter of [text('needle42'), text('line 1'), text('line 2')])
        await sameAnswers(store, plain, filter, range);
      expect(await count(store, text('needle42'))).toBe(1);
    } finally {
      await Promise.all([store.close(), plain.close()]);
    }
  });

  it('a block without events (a crash between the two commits) is only a false candidate', async () => {
    const c = await instance.connect();
    try {
      await c.run('CREATE TABLE events (ts TIMESTAMP, message VARCHAR)');
      const index = await WordIndex.open(c);
      const written = await index.write(
        c,
        buildWordBlocks([{ ts: BASE, message: 'ghost needle42' }], index.lowering),
      );
      index.add(written);
      expect(index.ranges(text('needle42'), range)).toEqual([{ fromMs: BASE, toMs: BASE }]);
      expect(index.ranges(text('other'), range)).toEqual([]);
      // Reopened: the block is loaded, and no block without bloom is added (no events).
      const again = await WordIndex.open(c);
      expect(again.ranges(text('needle42'), range)).toEqual([{ fromMs: BASE, toMs: BASE }]);
      expect(again.size.blocks).toBe(1);
    } finally {
      await c.run('DROP TABLE IF EXISTS events');
      await c.run('DROP TABLE IF EXISTS word_blocks');
      c.closeSync();
    }
  });
});

describe('rare values that stop being rare, and values no index should hold (issue 75, bad input)', () => {
  it('a token that becomes common leaves the rare path without a wrong answer', async () => {
    const [indexed, plain] = await Promise.all([open(':memory:'), open(':memory:', false)]);
    try {
      const range: TimeWindow = { fromMs: BASE - 1, toMs: BASE + 100_000_000 };
      const token = text('zircon7f3a');
      let i = 0;
      // Shippers' batches of 1,000, 40 of them: the token in 2 events of the first 20 (in the
      // first of their blocks), then in a third of every batch's events.
      for (let batch = 0; batch < 40; batch++) {
        const events = Array.from({ length: 1_000 }, (_, k) => {
          const n = i++;
          const hit = batch < 20 ? n === 1_234 || n === 3_456 : k % 3 === 0;
          return timed(n, `GET /orders/${n} ${hit ? 'ref=zircon7f3a9' : 'ref=none'}`);
        });
        await Promise.all([indexed.append(events), plain.append(events)]);
        if (batch === 19) {
          expect(await count(indexed, token, range)).toBe(2);
          expect((await indexed.readReach(token, SYSTEM_SCOPE, range)).index?.path).toBe('narrowed');
          await sameAnswers(indexed, plain, token, range);
        }
      }
      expect(await count(indexed, token, range)).toBe(2 + Math.ceil(1_000 / 3) * 20);
      expect((await indexed.readReach(token, SYSTEM_SCOPE, range)).index).toMatchObject({
        path: 'scan',
        why: 'too_many_candidates',
      });
      await sameAnswers(indexed, plain, token, range);
    } finally {
      await Promise.all([indexed.close(), plain.close()]);
    }
  });

  it('very long tokens and binary messages: found exactly, the bloom within its bound', async () => {
    const [indexed, plain] = await Promise.all([open(':memory:'), open(':memory:', false)]);
    try {
      const range: TimeWindow = { fromMs: BASE - 1, toMs: BASE + 100_000_000 };
      const next = prng(75);
      const hex = (n: number) =>
        Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(next() * 16)]).join('');
      const long = hex(200_000);
      const binary = '\u0000\u0001\u00ff\ud800 key=\u0000zz\u0007 \udfff end';
      const events = [
        timed(0, `payload=${long}`),
        timed(1, binary),
        ...Array.from({ length: 2_000 }, (_, k) => timed(k + 2, `id=${hex(32)} n=${k}`)),
      ];
      await Promise.all([indexed.append(events), plain.append(events)]);
      for (const needle of [long.slice(77_000, 77_040), long.slice(0, 11), 'key=\u0000zz', '\u0007 \udfff']) {
        const filter = text(needle);
        expect(await count(indexed, filter, range), JSON.stringify(needle.slice(0, 20))).toBe(
          await count(plain, filter, range),
        );
        await sameAnswers(indexed, plain, filter, range);
      }
      expect(await count(indexed, text(long.slice(150_000, 150_064)), range)).toBe(1);
      // 2,000 random ids and a 200,000-character run (about 100,000 window keys): the bloom
      // stays within the bound of keys an event (10 bits a key), its source keys alone past it.
      const words = (indexed as unknown as { words: WordIndex }).words;
      expect(words.size.bytes).toBeLessThan((events.length * KEYS_PER_EVENT * 10) / 8);
    } finally {
      await Promise.all([indexed.close(), plain.close()]);
    }
  });
});
