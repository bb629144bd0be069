import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent, StoredEvent } from '../../src/core/event.js';
import type { TableResult } from '../../src/event-store/query-plan.js';
import { EVERY_EVENT } from '../../src/event-store/read-scope.js';
import { and, cond } from '../../src/filter/ast.js';
import type { PatternGroups } from '../../src/pipes/program.js';
import { type Cell, evaluatePipes } from '../../src/pipes/run.js';
import { parseTableQuery } from '../../src/syntax/parse-query.js';
import { appendEvents, event } from './filter-store.js';
import { STORES, type StoreUnderTest } from './stores.js';

const T0 = Date.UTC(2024, 4, 1, 10);
const RANGE = { fromMs: T0 - 3_600_000, toMs: T0 + 3_600_000 };

const HOSTS = ['web-1', 'web-2', 'db', 'Web-1', 'é-host'];
const eventArb = (id: string): fc.Arbitrary<NormalisedEvent> =>
  fc
    .record({
      dt: fc.integer({ min: -3_500_000, max: 3_500_000 }),
      host: fc.option(fc.constantFrom(...HOSTS), { nil: null }),
      app: fc.option(fc.constantFrom('nginx', 'sshd', 'api'), { nil: null }),
      status: fc.option(fc.constantFrom(200, 201, 404, 500, 503), { nil: null }),
      bytes: fc.option(fc.integer({ min: -5, max: 5000 }), { nil: null }),
      dur: fc.option(
        fc.oneof(fc.integer({ min: 0, max: 900 }).map(String), fc.constantFrom('1.5', 'slow', '', '-2')),
        {
          nil: undefined,
        },
      ),
      message: fc.option(
        fc.oneof(
          fc.constantFrom(
            'user alice from 10.0.0.1 port 22',
            'user bob from 10.0.0.2 port 2222',
            'GET /a 200',
          ),
          fc.string({ maxLength: 12 }),
        ),
        { nil: null },
      ),
    })
    .map((r) =>
      event(id, {
        ts: T0 + r.dt,
        host: r.host,
        app: r.app,
        status: r.status,
        bytes: r.bytes,
        message: r.message,
        fields: r.dur === undefined ? {} : { dur: r.dur },
      }),
    );

const eventsArb = fc
  .integer({ min: 0, max: 25 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => eventArb(`e${String(i).padStart(2, '0')}`))));

// --- Random pipelines of stats / where / sort / limit / eval -----------------------------

const GROUP_FIELDS = ['host', 'app', 'status'];
const NUM_FIELDS = ['bytes', 'status', 'dur'];
const AGGS = ['count()', 'count', 'count_distinct', 'sum', 'avg', 'min', 'max', 'p50', 'p90'];

interface Stage {
  text: string;
  /** Columns after it (null: events, any field). */
  cols: string[] | null;
}

const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);

function stageArb(cols: string[] | null, k: number): fc.Arbitrary<Stage> {
  const numCols = cols ?? NUM_FIELDS;
  const anyCols = cols ?? [...GROUP_FIELDS, 'bytes', 'dur'];
  const stats = fc
    .tuple(
      fc.uniqueArray(pick(AGGS), { minLength: 1, maxLength: 3 }),
      fc.uniqueArray(pick(cols ?? GROUP_FIELDS), { maxLength: 2 }),
      pick(numCols),
      pick(anyCols),
    )
    .map(([aggs, by, f, g]) => {
      const made = aggs.map((a, i) => ({
        text: a.includes('(') ? `${a} as a${k}_${i}` : `${a}(${a.startsWith('count') ? g : f}) as a${k}_${i}`,
        name: `a${k}_${i}`,
      }));
      return {
        text: `stats ${made.map((m) => m.text).join(', ')}${by.length ? ` by ${by.join(', ')}` : ''}`,
        cols: [...by, ...made.map((m) => m.name)],
      };
    });
  const where = fc
    .tuple(
      pick(anyCols),
      pick(['=', '!=', '>', '>=', '<', '<=']),
      fc.integer({ min: -1, max: 600 }),
      fc.boolean(),
    )
    .map(([c, op, v, neg]) => ({ text: `where ${neg ? 'NOT ' : ''}${c} ${op} ${v}`, cols }));
  const textCols = cols ? cols.filter((c) => c === 'host' || c === 'app') : ['host', 'app'];
  // Nested: NULLs under NOT, OR and AND (a missing value matches no comparison).
  const cmp = fc
    .tuple(pick(anyCols), pick(['=', '!=', '>', '<=']), fc.integer({ min: -1, max: 600 }))
    .map(([c, op, v]) => `${c} ${op} ${v}`);
  const whereNested = fc
    .tuple(cmp, cmp, cmp, fc.boolean())
    .map(([a, b, c, neg]) => ({ text: `where ${neg ? 'NOT ' : ''}(${a} OR NOT ${b}) AND ${c}`, cols }));
  const whereText = fc
    .tuple(pick(textCols.length ? textCols : ['-']), pick(['=', '!=', '<']), pick(HOSTS))
    .map(([c, op, v]) => ({ text: `where ${c} ${op} "${v}" OR ${c} = "api"`, cols }));
  const sort = fc
    .uniqueArray(fc.tuple(pick(anyCols), fc.boolean()), { minLength: 1, maxLength: 2, selector: ([c]) => c })
    .map((keys) => ({ text: `sort ${keys.map(([c, d]) => `${d ? '-' : ''}${c}`).join(', ')}`, cols }));
  const limit = fc.integer({ min: 1, max: 8 }).map((n) => ({ text: `limit ${n}`, cols }));
  const evalArb = fc
    .tuple(
      pick(numCols),
      pick(['+', '-', '*', '/']),
      fc.oneof(pick(numCols), fc.integer({ min: 0, max: 3 }).map(String)),
    )
    .map(([a, op, b]) => ({
      text: `eval e${k} = ${a} ${op} ${b}`,
      cols: cols ? [...cols.filter((c) => c !== `e${k}`), `e${k}`] : null,
    }));
  return textCols.length
    ? fc.oneof(stats, where, whereNested, whereText, sort, limit, evalArb)
    : fc.oneof(stats, where, whereNested, sort, limit, evalArb);
}

const pipelineArb: fc.Arbitrary<string> = fc.integer({ min: 1, max: 4 }).chain((n) => {
  let arb: fc.Arbitrary<Stage[]> = fc.constant([]);
  for (let k = 0; k < n; k++)
    arb = arb.chain((stages) => {
      const cols = stages.length ? (stages[stages.length - 1] as Stage).cols : null;
      return stageArb(cols, k).map((s) => [...stages, s]);
    });
  return arb.map((stages) => `* | ${stages.map((s) => s.text).join(' | ')}`);
});

/** Cells equal, numbers to 1e-9 relative (sums of doubles may be added in another order). */
function sameCells(a: Cell[][], b: Cell[][]): boolean {
  if (a.length !== b.length) return false;
  return a.every((row, i) =>
    row.every((x, j) => {
      const y = b[i]?.[j];
      if (typeof x === 'number' && typeof y === 'number')
        return x === y || Math.abs(x - y) <= 1e-9 * Math.max(1, Math.abs(x), Math.abs(y));
      return x === y;
    }),
  );
}

describe.each(STORES.filter((s) => s.run))('$name: pipes', (kind) => {
  let t: StoreUnderTest;
  let run = 0;
  beforeAll(async () => {
    t = await kind.open();
  });
  afterAll(async () => {
    await t?.close();
  }, 120_000);

  async function table(query: string, events: readonly NormalisedEvent[], groups?: PatternGroups) {
    const prefix = `p${run++}-`;
    const stored = (await appendEvents(
      t.store,
      events.map((e) => ({ ...e, ev_id: prefix + e.ev_id })),
    )) as unknown as StoredEvent[];
    const parsed = parseTableQuery(query);
    const { filter } = parsed;
    // The groups of ids the patterns component gives a `patterns` stage (features/patterns).
    const program = groups
      ? {
          ...parsed.program,
          stages: parsed.program.stages.map((st) => (st.s === 'patterns' ? { ...st, groups } : st)),
        }
      : parsed.program;
    const result = (await t.store.execute({
      kind: 'table',
      scope: EVERY_EVENT,
      filter: and(cond('ev_id', 'startswith', prefix), filter),
      range: RANGE,
      program,
    })) as TableResult;
    const expected = evaluatePipes(program, stored, RANGE);
    return { result, expected };
  }

  it('random pipelines of stats, where, sort, limit and eval give what the JavaScript evaluation gives', async () => {
    await fc.assert(
      fc.asyncProperty(eventsArb, pipelineArb, async (events, query) => {
        const { result, expected } = await table(query, events);
        expect(
          sameCells(result.rows, expected),
          `${query}\n${JSON.stringify({ got: result.rows, expected })}`,
        ).toBe(true);
        expect(result.totalRows).toBe(expected.length);
      }),
      { numRuns: kind.name === 'clickhouse' ? 60 : 150 },
    );
  }, 300_000);

  const fixed = [
    [
      'user alice from 10.0.0.1 port 22',
      'user bob from 10.0.0.2 port 2222',
      'user alice from 10.0.0.3 port 22',
      'GET /a 200',
    ],
  ];
  const sample = (fixed[0] as string[]).map((message, i) =>
    event(`f${i}`, {
      ts: T0 + i * 60_000,
      host: i % 2 ? 'web-2' : 'web-1',
      message,
      bytes: 100 * (i + 1),
      pattern_id: i < 3 ? 'p-login' : 'p-get',
    }),
  );

  it.each([
    [
      '* | extract "user <user> from <ip> port <port>" | stats count() by user | sort user',
      [
        ['alice', 2],
        ['bob', 1],
        [null, 1],
      ],
    ],
    [
      '* | rex "from (?P<net>[0-9]+\\.[0-9]+)\\.[0-9.]+ port (?P<port>\\d+)" | stats count() by net, port | sort -count, port',
      [
        ['10.0', '22', 2],
        ['10.0', '2222', 1],
        [null, null, 1],
      ],
    ],
    ['* | top 1 host', [['web-1', 2]]],
    ['* | top 1 host by port | extract "port <port>" | fields host', null],
    [
      '* | eval kb = bytes / 100 | eval s = concat(upper(host), "-", kb) | fields s, kb | sort -kb | limit 2',
      [
        ['WEB-2-4', 4],
        ['WEB-1-3', 3],
      ],
    ],
    [
      '* | rename host as h | stats sum(bytes) as total by h',
      [
        ['web-1', 400],
        ['web-2', 600],
      ],
    ],
    [
      '* | patterns | fields pattern_id, count, share',
      [
        ['p-login', 3, 0.75],
        ['p-get', 1, 0.25],
      ],
    ],
    ['* | timechart span=30m count() by host | where count > 0', null],
    ['* | timechart span=30m count(), max(bytes) as top', null],
    ['* | where len(message) > 3', null],
    [
      '* | eval t = concat(2.5e17, " ", 1e21, " ", 0.1, " ", -0.5 * 0, " ", 1e308, " ", 7 / 2) | fields t | limit 1',
      [['250000000000000000 1e+21 0.1 0 1e+308 3.5']],
    ],
  ] as const)('%s', async (query, rows) => {
    let parsed = true;
    try {
      parseTableQuery(query);
    } catch {
      parsed = false;
    }
    if (!parsed) {
      expect(() => parseTableQuery(query)).toThrow(/position/);
      return;
    }
    const { result, expected } = await table(query, sample);
    expect(sameCells(result.rows, expected), JSON.stringify({ got: result.rows, expected })).toBe(true);
    if (rows) expect(result.rows).toEqual(rows);
  });

  it('patterns counts groups of ids as one row, named by its most common id (the least on a tie)', async () => {
    // Ids of one text from several apps, as the Patterns query groups them: p-a and p-b (2
    // each: p-a stands), p-c and p-d (p-d the more common stands), p-e alone; p-z has no event.
    const ids = ['p-a', 'p-b', 'p-a', 'p-b', 'p-d', 'p-c', 'p-d', 'p-d', 'p-e', null];
    const events = ids.map((pattern_id, i) =>
      event(`g${i}`, { ts: T0 + i * 1000, app: `app-${i % 3}`, message: 'm', pattern_id }),
    );
    const groups = { ids: ['p-b', 'p-a', 'p-z', 'p-c', 'p-d'], of: ['p-a', 'p-a', 'p-a', 'p-c', 'p-c'] };
    for (const [query, rows] of [
      [
        '* | patterns',
        [
          ['p-a', 4, 4 / 9],
          ['p-d', 4, 4 / 9],
          ['p-e', 1, 1 / 9],
        ],
      ],
      ['* | patterns 1 | fields pattern_id, count', [['p-a', 4]]],
      // app-0's events: p-a, p-b and p-d once each.
      ['* | where app = "app-0" | patterns | where count > 1 | fields pattern_id, count', [['p-a', 2]]],
    ] as const) {
      const { result, expected } = await table(query, events, groups);
      expect(sameCells(result.rows, expected), JSON.stringify({ query, got: result.rows, expected })).toBe(
        true,
      );
      const shown = result.rows.map((r) => r.filter((_, i) => result.columns[i]?.name !== 'template'));
      expect(sameCells(shown, rows as unknown as Cell[][]), JSON.stringify({ query, shown })).toBe(true);
    }
  });

  it('any query the parser takes runs in the store and gives the JavaScript evaluation', async () => {
    const col = pick([
      'host',
      'app',
      'status',
      'bytes',
      'dur',
      'ts',
      'message',
      'x',
      'count',
      'n',
      'fields',
      '_c1',
      'ev_id',
      'é',
    ]);
    const lit = fc.oneof(
      fc.integer({ min: -5, max: 5 }).map(String),
      pick(['"a"', '"10"', '""', '1e308', '1e15', '2.5e17', '-0.5', '"é\\"']),
    );
    const expr: fc.Arbitrary<string> = fc.letrec((tie) => ({
      e: fc.oneof(
        { depthSize: 'small' },
        col,
        lit,
        fc.tuple(tie('e'), pick(['+', '-', '*', '/']), tie('e')).map(([a, o, b]) => `(${a} ${o} ${b})`),
        fc.tuple(pick(['lower', 'upper', 'len']), tie('e')).map(([f, a]) => `${f}(${a})`),
        fc.array(tie('e'), { minLength: 1, maxLength: 3 }).map((a) => `concat(${a.join(', ')})`),
      ),
    })).e as fc.Arbitrary<string>;
    const agg = fc
      .tuple(pick([...AGGS.filter((a) => !a.includes('(')), 'p95', 'p99']), col)
      .map(([a, c]) => `${a}(${c})`);
    const pipe = fc.oneof(
      fc
        .tuple(
          fc.array(fc.oneof(agg, fc.constant('count()')), { minLength: 1, maxLength: 3 }),
          fc.array(col, { maxLength: 2 }),
        )
        .map(([a, by]) => `stats ${a.join(', ')}${by.length ? ` by ${by.join(', ')}` : ''}`),
      fc
        .tuple(fc.integer({ min: 1, max: 20 }), col, fc.option(col))
        .map(([n, c, b]) => `top ${n} ${c}${b ? ` by ${b}` : ''}`),
      fc
        .tuple(pick(['', 'span=10m ', 'span=1h ']), agg, fc.option(col))
        .map(([s, a, b]) => `timechart ${s}${a}${b ? ` by ${b}` : ''}`),
      fc.constant('patterns 3'),
      fc.array(col, { minLength: 1, maxLength: 3 }).map((c) => `fields ${c.join(', ')}`),
      fc
        .array(fc.tuple(fc.boolean(), col), { minLength: 1, maxLength: 2 })
        .map((k) => `sort ${k.map(([d, c]) => `${d ? '-' : ''}${c}`).join(', ')}`),
      fc.integer({ min: 1, max: 10 }).map((n) => `limit ${n}`),
      fc
        .tuple(col, pick(['=', '!=', '>', '<=']), lit, fc.boolean())
        .map(([c, o, v, n]) => `where ${n ? 'NOT ' : ''}${c} ${o} ${v}`),
      fc
        .tuple(pick(['user <u> from <ip>', '<a> <b>', 'GET <p>', '"<q>"']), fc.option(col))
        .map(([p, f]) => `extract "${p.replaceAll('"', '\\"')}"${f ? ` from ${f}` : ''}`),
      fc
        .tuple(
          pick(['(?P<a>[a-z]+)', '^(?P<w>\\w+) (\\d+)?', '(?P<n>[0-9]+)|(?P<m>x)', '[(](?P<p>[^)]*)[)]']),
          fc.option(col),
        )
        .map(([r, f]) => `rex "${r}"${f ? ` from ${f}` : ''}`),
      fc.tuple(col, col).map(([a, b]) => `rename ${a} as ${b}`),
      fc.tuple(col, expr).map(([n, e]) => `eval ${n} = ${e}`),
    );
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(eventsArb, fc.array(pipe, { minLength: 1, maxLength: 4 }), async (events, pipes) => {
        const query = `* | ${pipes.join(' | ')}`;
        try {
          parseTableQuery(query);
        } catch (e) {
          expect((e as Error).message, query).toMatch(/position/);
          return;
        }
        accepted++;
        const { result, expected } = await table(query, events);
        expect(
          sameCells(result.rows, expected),
          `${query}\n${JSON.stringify({ got: result.rows, expected })}`,
        ).toBe(true);
      }),
      { numRuns: kind.name === 'clickhouse' ? 80 : 200 },
    );
    expect(accepted).toBeGreaterThan(20);
  }, 300_000);

  it('writes numbers as text as JavaScript does (small ones, exponents, whole ones past 2^53)', async () => {
    const values = [
      1.1664816626749664e-7,
      -2.5e-8,
      1e-7,
      0.000001,
      -0.0000015,
      0.000099,
      0.0001,
      1.5e22,
      123.456,
      // Whole numbers past 2^53: the shortest round-trip digits, then zeros (not the double's exact value).
      2.5e17 + 96,
      -(2 ** 60),
      2 ** 53 + 2,
      1e15,
      9.999999999999999e20,
    ];
    const events = values.map((v, i) => event(`n${i}`, { ts: T0 + i * 1000, fields: { v: String(v) } }));
    const { result, expected } = await table('* | eval t = concat(v * 1) | sort ts | fields t', events);
    expect(result.rows.map((r) => r.at(-1))).toEqual(values.map(String));
    expect(sameCells(result.rows, expected)).toBe(true);
  });

  it('writes an overflow to infinity as JavaScript does (Infinity, -Infinity)', async () => {
    const events = ['1e308', '-1e308'].map((v, i) => event(`i${i}`, { ts: T0 + i * 1000, fields: { v } }));
    const { result, expected } = await table('* | eval t = concat(v * 1e15) | sort ts | fields t', events);
    expect(result.rows.map((r) => r.at(-1))).toEqual(['Infinity', '-Infinity']);
    expect(sameCells(result.rows, expected)).toBe(true);
  });

  it('fills every bucket of a timechart and folds series past the top 5 into other', async () => {
    const events = Array.from({ length: 14 }, (_, i) =>
      event(`t${i}`, { ts: T0 + (i % 3) * 600_000, host: `h${i % 7}` }),
    );
    const { result, expected } = await table('* | timechart span=10m count() by host', events);
    expect(sameCells(result.rows, expected)).toBe(true);
    const series = new Set(result.rows.map((r) => r[1]));
    expect(series.size).toBe(6);
    expect(series.has('other')).toBe(true);
    // 2 hours of 10-minute buckets for each series, empty ones 0.
    expect(result.rows.length).toBe(6 * 12);
    expect(result.rows.filter((r) => r[2] === 0).length).toBeGreaterThan(0);
  });

  it('a chain of evals, each using the one before twice, stays small (made columns past a size)', async () => {
    const chain = Array.from({ length: 30 }, (_, i) => `eval v${i + 1} = v${i} + v${i} / 2`).join(' | ');
    const { result, expected } = await table(
      `* | eval v0 = bytes | ${chain} | stats max(v30) as top`,
      sample,
    );
    expect(sameCells(result.rows, expected)).toBe(true);
    expect(result.rows[0]?.[0]).toBeCloseTo(400 * 1.5 ** 30, -10);
  });

  it('evals of numbers as text nested in each other stay within the engine (written-out sizes)', async () => {
    // Property tests' counterexamples: each eval writes the one before three times, and a
    // number as text writes its operand six times on ClickHouse ("AST is too big"); an
    // operand written more than once is made a column past a size.
    for (const query of [
      '* | eval host = concat(len((host + concat(host)))) | eval host = ((concat(host) + host) + concat(lower(host)))',
      '* | eval a = concat(bytes) | eval a = concat(a + a) | eval a = concat(a + a) | eval a = concat(a + a) | fields a',
      '* | eval host = concat(len((host + concat((host + host), host))), "a") | rex "(?P<a>[a-z]+)"',
      // Seven levels in one expression, each writing the one inside six times (6^7 before).
      `* | eval d = ${'concat(len('.repeat(7)}host${') + 1)'.repeat(7)} | stats max(d) as top by d`,
    ]) {
      const { result, expected } = await table(query, sample);
      expect(sameCells(result.rows, expected), query).toBe(true);
    }
  });

  it('cuts at 10,000 rows and counts them all', async () => {
    const events = Array.from({ length: 10_050 }, (_, i) =>
      event(`c${String(i).padStart(5, '0')}`, { ts: T0 + i }),
    );
    const { result } = await table('* | fields ts', events);
    expect(result.rows.length).toBe(10_000);
    expect(result.totalRows).toBe(10_050);
  }, 60_000);
});
