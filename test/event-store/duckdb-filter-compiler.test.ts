import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { DuckDBInstance, DuckDBListValue } from '@duckdb/node-api';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import {
  compileFilter,
  FILTER_FUNCTIONS,
  LOWER_MISMATCH,
  registerFilterFunctions,
} from '../../src/event-store/duckdb/duckdb-filter-compiler.js';
import { EVENT_COLUMN_SQL } from '../../src/event-store/duckdb/duckdb-schema.js';
import { quoteIdent, SqlParams } from '../../src/event-store/sql/sql-params.js';
import { and, cond, type FilterNode, not, or, parseNumeric, TRUE, text } from '../../src/filter/ast.js';
import type { EventLike } from '../../src/filter/evaluate.js';
import { checkRegex, compileRegex } from '../../src/filter/regex.js';
import { appendEvents, event, jsSelects, openFilterStore, sqlSelects } from './filter-store.js';

const TS = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const DROP = "'; DROP TABLE events; --";

const EVENTS = [
  event('e1', {
    ts: TS,
    host: 'web-01',
    app: 'nginx',
    severity: 'error',
    message: 'GET /index.html failed: Timeout after 30s',
    src_ip: '10.1.2.3',
    src_port: 51234,
    dst_ip: '2001:db8::1',
    dst_port: 443,
    action: 'login',
    status: 503,
    bytes: 1024,
    source: 'api',
    fields: { 'http.method': 'GET', latency: '250', tag: 'Alpha', empty: '', mapped: '::ffff:10.9.9.9' },
  }),
  event('e2', {
    ts: TS + 1000,
    host: 'db-01',
    message: 'İstanbul ΑΣ ok',
    src_ip: '192.168.1.20',
    dst_ip: '::ffff:10.1.2.3',
    status: 200,
    user: 'alice',
    fields: { latency: '1e3', tag: 'beta', n: '-0' },
  }),
  event('e3', {
    ts: TS - 86_400_000,
    src_ip: 'not an ip',
    dst_ip: 'fe80::1%eth0',
    bytes: 2 ** 60,
    user: "O'Brien",
    fields: { latency: ' 42', weird: '100%_done', 'we"ird': 'q' },
  }),
  event('e4', {
    ts: 0,
    host: '',
    message: 'ÀÉÎ naïve CAFÉ',
    src_ip: '10.255.255.255',
    dst_ip: '010.0.0.1',
    status: -1,
    bytes: 0,
    source: 'syslog',
  }),
  event('e5', { ts: TS, host: 'x"y', message: DROP, fields: { "it's": DROP } }),
];
const ALL = ['e1', 'e2', 'e3', 'e4', 'e5'];

let store: DuckDbEventStore;
let stored: EventLike[];

beforeAll(async () => {
  store = await openFilterStore();
  stored = await appendEvents(store, EVENTS);
});

afterAll(async () => {
  await store.close();
});

type Case = readonly [string, FilterNode, readonly string[]];

/** Each case: the expected events, which the evaluator and the compiled SQL must both select. */
const table = (cases: readonly Case[]) => {
  it.each(cases)('%s', async (_name, node, expected) => {
    expect(jsSelects(stored, node)).toEqual(expected);
    expect(await sqlSelects(store, node)).toEqual(expected);
  });
};

describe('eq / ne / in / not_in', () => {
  table([
    ['string', cond('host', 'eq', 'web-01'), ['e1']],
    ['empty string is present', cond('host', 'eq', ''), ['e4']],
    ['integer, number', cond('status', 'eq', 503), ['e1']],
    ['integer, numeric string', cond('status', 'eq', '503.0'), ['e1']],
    ['integer, fraction never equals', cond('status', 'eq', 503.5), []],
    ['integer, non-numeric', cond('status', 'eq', 'abc'), []],
    ['integer, boolean', cond('status', 'eq', true), []],
    ['integer, beyond INTEGER', cond('status', 'eq', 5e9), []],
    ['bigint beyond 2^53', cond('bytes', 'eq', 2 ** 60), ['e3']],
    ['time, Unix seconds', cond('ts', 'eq', TS / 1000), ['e1', 'e5']],
    ['time, ISO with offset', cond('ts', 'eq', '2024-05-01T12:00:00.123+02:00'), ['e1', 'e5']],
    ['time, unparseable', cond('ts', 'eq', 'garbage'), []],
    ['map, number as text', cond('latency', 'eq', 250), ['e1']],
    ['map, empty value', cond('empty', 'eq', ''), ['e1']],
    ['quote in value', cond('user', 'eq', "O'Brien"), ['e3']],
    ['ne string, missing is true', cond('host', 'ne', 'web-01'), ['e2', 'e3', 'e4', 'e5']],
    ['ne integer, non-numeric is true everywhere', cond('status', 'ne', 'abc'), ALL],
    ['ne map', cond('latency', 'ne', '250'), ['e2', 'e3', 'e4', 'e5']],
    ['in integer, mixed values', cond('status', 'in', ['200', 503, 'x', true]), ['e1', 'e2']],
    ['not_in integer', cond('status', 'not_in', [200]), ['e1', 'e3', 'e4', 'e5']],
    ['in time', cond('ts', 'in', [0, '2024-05-01T10:00:00.123Z']), ['e1', 'e4', 'e5']],
    ['in map, case-sensitive', cond('tag', 'in', ['alpha', 'Alpha']), ['e1']],
    ['in string', cond('host', 'in', ['web-01', 'db-01']), ['e1', 'e2']],
    ['not_in nothing parseable', cond('ts', 'not_in', ['x']), ALL],
  ]);
});

describe('contains / not_contains / text / startswith / endswith / regex', () => {
  table([
    ['contains, case-insensitive', cond('message', 'contains', 'TIMEOUT'), ['e1']],
    ['text', text('timeout'), ['e1']],
    ['Latin-1 capitals', cond('message', 'contains', 'café'), ['e4']],
    ['Latin-1 needle', cond('message', 'contains', 'NAÏVE'), ['e4']],
    ['U+0130 lowers to i + U+0307', cond('message', 'contains', 'i\u0307stanbul'), ['e2']],
    ['U+0130 is not a plain i', cond('message', 'contains', 'istanbul'), []],
    ['final sigma', cond('message', 'contains', 'ας'), ['e2']],
    ['final sigma is not σ', cond('message', 'contains', 'ασ'), []],
    ['integer as decimal text', cond('status', 'contains', '50'), ['e1']],
    ['time is false', cond('ts', 'contains', '1'), []],
    ['time negated is true', cond('ts', 'not_contains', '1'), ALL],
    ['wildcard characters are literal', cond('weird', 'contains', '%_'), ['e3']],
    ['not_contains, missing is true', cond('host', 'not_contains', '01'), ['e3', 'e4', 'e5']],
    ['startswith', cond('host', 'startswith', 'web'), ['e1']],
    ['startswith empty', cond('host', 'startswith', ''), ['e1', 'e2', 'e4', 'e5']],
    ['startswith integer', cond('status', 'startswith', '-'), ['e4']],
    ['endswith', cond('host', 'endswith', '-01'), ['e1', 'e2']],
    ['regex, partial match', cond('host', 'regex', '(web|db)-\\d'), ['e1', 'e2']],
    ['regex (?i)', cond('message', 'regex', '(?i)timeout'), ['e1']],
    ['regex on integer text', cond('status', 'regex', '^5\\d\\d$'), ['e1']],
    ['regex on time is false', cond('ts', 'regex', '.'), []],
  ]);
});

describe('gt / gte / lt / lte / between', () => {
  table([
    ['integer gt', cond('status', 'gt', 200), ['e1']],
    ['integer gte numeric string', cond('status', 'gte', '200'), ['e1', 'e2']],
    ['integer lt fraction', cond('status', 'lt', 0.5), ['e4']],
    ['integer gt negative fraction', cond('status', 'gt', -1.5), ['e1', 'e2', 'e4']],
    ['integer below the type', cond('status', 'lte', -1e300), []],
    ['integer all present', cond('status', 'gt', -1e300), ['e1', 'e2', 'e4']],
    ['bigint beyond 2^53', cond('bytes', 'gt', 2 ** 59), ['e3']],
    ['time gt ISO', cond('ts', 'gt', '2024-05-01T10:00:00.123Z'), ['e2']],
    ['time lt seconds', cond('ts', 'lt', 1), ['e4']],
    ['time beyond DuckDB, lt', cond('ts', 'lt', 1e300), ALL],
    ['time beyond DuckDB, gt', cond('ts', 'gt', 1e300), []],
    ['time before DuckDB', cond('ts', 'gt', -1e300), ALL],
    ['string, code point order', cond('host', 'gt', 'db'), ['e1', 'e2', 'e5']],
    ['map, number compares numerically', cond('latency', 'gt', 300), ['e2']],
    ['map, string compares as text', cond('latency', 'gt', '3'), []],
    ['string with number, non-numeric', cond('host', 'gt', 5), []],
    ['negative zero', cond('n', 'lte', 0), ['e2']],
    ['negative zero is not below zero', cond('n', 'lt', 0), []],
    ['between integer', cond('status', 'between', [200, 503]), ['e1', 'e2']],
    ['between integer, empty', cond('status', 'between', [503.5, 600]), []],
    ['between time', cond('ts', 'between', ['2024-05-01', '2024-05-02']), ['e1', 'e2', 'e5']],
    ['between map numbers', cond('latency', 'between', [200, 1000]), ['e1', 'e2']],
    ['between map strings', cond('latency', 'between', ['1', '3']), ['e1', 'e2']],
  ]);
});

describe('exists / cidr / logic', () => {
  table([
    ['exists column', cond('host', 'exists'), ['e1', 'e2', 'e4', 'e5']],
    ['exists empty map value', cond('empty', 'exists'), ['e1']],
    ['exists unknown', cond('nope', 'exists'), []],
    ['not_exists unknown', cond('nope', 'not_exists'), ALL],
    ['exists time', cond('stored_at', 'exists'), ALL],
    ['cidr IPv4', cond('src_ip', 'cidr', '10.0.0.0/8'), ['e1', 'e4']],
    ['cidr IPv4 block, mapped IPv6, no leading zeros', cond('dst_ip', 'cidr', '10.0.0.0/8'), ['e2']],
    ['cidr IPv6', cond('dst_ip', 'cidr', '2001:db8::/32'), ['e1']],
    ['cidr zone id', cond('dst_ip', 'cidr', 'fe80::/10'), ['e3']],
    ['cidr mapped IPv6 block, IPv4 addresses', cond('src_ip', 'cidr', '::ffff:10.0.0.0/104'), ['e1', 'e4']],
    ['cidr ::/0', cond('src_ip', 'cidr', '::/0'), ['e1', 'e2', 'e4']],
    ['cidr map field', cond('mapped', 'cidr', '10.0.0.0/8'), ['e1']],
    ['cidr partial octet', cond('src_ip', 'cidr', '10.1.2.0/23'), ['e1']],
    ['cidr host bits set', cond('src_ip', 'cidr', '10.1.2.2/31'), ['e1']],
    ['cidr integer column', cond('status', 'cidr', '0.0.0.0/0'), []],
    ['cidr invalid block', cond('src_ip', 'cidr', 'bad'), []],
    ['not of a missing comparison', not(cond('user', 'gt', 'a')), ['e1', 'e3', 'e4', 'e5']],
    ['and', and(text('timeout'), cond('status', 'eq', 503)), ['e1']],
    ['or', or(cond('host', 'eq', 'db-01'), cond('status', 'lt', 0)), ['e2', 'e4']],
    ['not of a group', not(or(cond('src_ip', 'cidr', '10.0.0.0/8'), cond('host', 'exists'))), ['e3']],
    ['true', TRUE, ALL],
  ]);
});

describe('values are bound, never interpolated', () => {
  table([
    ['value', cond('message', 'eq', DROP), ['e5']],
    ['map key and value', cond("it's", 'eq', DROP), ['e5']],
    ['double quote in a map key', cond('we"ird', 'eq', 'q'), ['e3']],
    ['field name that looks like SQL', cond("x') OR true --", 'eq', 'a'), []],
    ['regex', cond('message', 'regex', "'; DROP"), ['e5']],
    ['contains', cond('host', 'contains', 'X"Y'), ['e5']],
  ]);

  it('keeps every value out of the SQL text', () => {
    const params = new SqlParams();
    const sql = compileFilter(
      and(
        cond('message', 'eq', DROP),
        cond("it's", 'contains', DROP),
        cond('host', 'in', [DROP, 'b']),
        cond('user', 'between', [DROP, 'z']),
        cond('src_ip', 'cidr', '10.0.0.0/8'),
      ),
      params,
    );
    expect(sql).not.toMatch(/DROP|'/);
    expect(params.values).toContain(DROP);
  });

  it('leaves the table in place', async () => {
    const rows = await store.runSql('SELECT count(*) AS n FROM events');
    expect(Number(rows[0]?.n)).toBe(EVENTS.length);
  });
});

describe('SqlParams and quoteIdent', () => {
  it('numbers placeholders in order', () => {
    const params = new SqlParams();
    expect([params.add('a'), params.add(2), params.add(null)]).toEqual(['$1', '$2', '$3']);
    expect(params.values).toEqual(['a', 2, null]);
  });

  it('quotes identifiers, doubling inner quotes', async () => {
    expect(quoteIdent('user')).toBe('"user"');
    expect(quoteIdent('a"b')).toBe('"a""b"');
    const rows = await store.runSql(`SELECT 1 AS ${quoteIdent('we"ird col')}`);
    expect(rows[0]).toEqual({ 'we"ird col': 1 });
  });
});

describe('what the compiler assumes of DuckDB', () => {
  it('EVENT_COLUMN_SQL matches the events table', async () => {
    // `fields` is read through map lookups, `shape` (how to rebuild the record) is never
    // filtered on, and `streams` is the store's stream membership (stream-sets.ts).
    const rows = await store.runSql(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_name = 'events' AND column_name NOT IN ('fields', 'shape', 'streams') ORDER BY ordinal_position`,
    );
    expect(
      Object.fromEntries(
        rows.map((r) => [r.column_name, { type: r.data_type, notNull: r.is_nullable === 'NO' }]),
      ),
    ).toEqual(EVENT_COLUMN_SQL);
  });

  it('keeps time and integer conditions as table filters (zone maps)', async () => {
    const params = new SqlParams();
    const where = compileFilter(
      and(cond('ts', 'gte', '2024-05-01'), cond('ts', 'lt', '2024-05-02'), cond('status', 'gte', 500)),
      params,
    );
    const rows = await store.runSql(`EXPLAIN SELECT ev_id FROM events WHERE ${where}`, params.values);
    const plan = rows.map((r) => String(r.explain_value)).join('\n');
    const filters = plan.slice(plan.indexOf('Filters:')).replace(/[\s│]+/g, '');
    expect(filters).toContain('ts>=');
    expect(filters).toContain('ts<');
    expect(filters).toContain('status>=500');
  });

  it('reads numeric text exactly as parseNumeric does', async () => {
    const alphabet = fc.constantFrom(...'0123456789.eE+- x_'.split(''), '١', 'Infinity', '0x1');
    const samples = [
      ...fc.sample(fc.string({ unit: alphabet, maxLength: 8 }), { numRuns: 3000, seed: 42 }),
      ...['1e400', '1e-400', '4.9406564584124654e-324', '.5', '5.', '+.5e-3', '-0', `1${'0'.repeat(400)}`],
    ];
    const params = new SqlParams();
    const list = params.add(JSON.stringify(samples));
    const where = compileFilter(cond('k', 'gte', -Number.MAX_VALUE), params);
    // The map field `k` holds each sample in turn; `gte -MAX` is true exactly when it is numeric.
    const rows = await store.runSql(
      `SELECT s, TRY_CAST(s AS DOUBLE) AS d FROM (SELECT s, MAP {'k': s} AS fields FROM (SELECT unnest(from_json(${list}, '["VARCHAR"]')) AS s)) WHERE ${where}`,
      params.values,
    );
    const sql = new Map(rows.map((r) => [String(r.s), Number(r.d)]));
    const js = new Map(
      samples.flatMap((s) => {
        const n = parseNumeric(s);
        return n === undefined ? [] : [[s, n] as const];
      }),
    );
    expect(sql).toEqual(js);
  });

  it('LOWER_MISMATCH and U+0130 cover every code point where lower() and toLowerCase() differ', async () => {
    const jsChanged: number[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const c = String.fromCodePoint(cp);
      if (c.toLowerCase() !== c) jsChanged.push(cp);
    }
    const rows = await store.runSql(
      `SELECT cp::INTEGER AS cp, encode(lower(chr(cp::INTEGER))) AS l FROM range(0, 1114112) t(cp)
       WHERE (cp < 55296 OR cp > 57343)
         AND (lower(chr(cp::INTEGER)) <> chr(cp::INTEGER) OR list_contains($1, cp::INTEGER))`,
      [new DuckDBListValue(jsChanged)],
    );
    const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });
    const differing = rows.flatMap((r) => {
      const c = String.fromCodePoint(Number(r.cp));
      const lowered = utf8.decode(r.l as Uint8Array);
      return c.toLowerCase() === lowered ? [] : [{ c, js: c.toLowerCase(), duckdb: lowered }];
    });
    expect(differing.find((d) => d.c === '\u0130')).toEqual({ c: '\u0130', js: 'i\u0307', duckdb: 'i' });
    const unexplained = differing.filter(
      (d) => d.c !== '\u0130' && ![...d.js].every((x) => LOWER_MISMATCH.test(x)),
    );
    expect(unexplained).toEqual([]);
    // Capital sigma differs only in context (final form), so it is listed by hand.
    expect(LOWER_MISMATCH.test('σ') && LOWER_MISMATCH.test('ς')).toBe(true);
  });

  it('registers the functions instance-wide, harmlessly twice, keeping a leading U+FEFF', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const a = await instance.connect();
    const b = await instance.connect();
    try {
      registerFilterFunctions(a);
      registerFilterFunctions(a);
      const reader = await b.runAndReadAll(
        `SELECT ${FILTER_FUNCTIONS.cidr}(encode($1), encode($3)) AS plain,
                ${FILTER_FUNCTIONS.cidr}(encode($2), encode($3)) AS bom,
                ${FILTER_FUNCTIONS.icontains}(encode($4), encode($5)) AS needle`,
        ['::1', '\uFEFF::1', '::/0', '\uFEFFΑΣ', '\uFEFFας'],
      );
      expect(reader.getRowObjectsJS()).toEqual([{ plain: true, bom: false, needle: true }]);
    } finally {
      b.closeSync();
      a.closeSync();
      instance.closeSync();
    }
  });

  it('runs every regex validation accepts (RE2 as DuckDB has it, not the extensions of re2js or JavaScript)', async () => {
    const accepts = async (pattern: string) => {
      try {
        await store.runSql('SELECT regexp_matches($1, $2) AS m', ['abc', pattern]);
        return true;
      } catch {
        return false;
      }
    };
    // JavaScript syntax (and re2js's extensions) DuckDB's RE2 refuses: validation refuses it.
    for (const p of [
      '(?<n>a)',
      '\\p{Letter}',
      '\\p{Script=Greek}',
      '\\p{gc=L}',
      '\\p{Emoji}',
      '\\p{Alphabetic}',
    ]) {
      expect(await accepts(p), p).toBe(false);
      expect(checkRegex(p), p).toBeDefined();
    }
    for (const p of ['(?P<n>a)', '\\p{L}', '\\pL', '\\p{Greek}', '\\P{Lu}', 'a/b', '\\/', '']) {
      expect(checkRegex(p), p).toBeUndefined();
      expect(await accepts(p), p).toBe(true);
    }
    // Every Unicode class the in-process engine (re2js) knows: accepted exactly when
    // DuckDB's RE2 knows it too (its tables, read from its build, are the whole list).
    const built = readFileSync(createRequire(import.meta.url).resolve('re2js'), 'utf8');
    const names = [...built.matchAll(/^\t\t([A-Za-z_]+): \(\) => new UnicodeRangeTable/gm)].map((m) => m[1]);
    expect(names.length).toBeGreaterThan(150);
    for (const name of names) {
      const p = `x\\p{${name}}`;
      expect(checkRegex(p) === undefined, p).toBe(await accepts(p));
    }
    // Unicode classes and case folding agree with DuckDB on the characters both tables
    // know; a character of Unicode 16 (U+A7CB, capital of ɤ) is where they part, as
    // documented (the server's tables are newer).
    const matches = async (pattern: string, value: string) =>
      (await store.runSql('SELECT regexp_matches($1, $2) AS m', [value, pattern]))[0]?.m === true;
    for (const value of ['é', 'É', 'ß', 'ΑΣ', 'σς', 'ǅ', 'İ', 'ɤ', 'ʰ', '😀', '\u00a0', '٣', 'Ⱥ', 'ẞ'])
      for (const pattern of [
        '\\pL',
        '\\p{Lu}',
        '\\p{Ll}',
        '\\pN',
        '\\pZ',
        '\\p{Greek}',
        '\\PL',
        '(?i)σ',
        '(?i)é',
        '(?i)ǆ',
        '(?i)ß',
        '(?i)ⱥ',
      ])
        expect(compileRegex(pattern).test(value), `${pattern} on ${value}`).toBe(
          await matches(pattern, value),
        );
    expect(compileRegex('\\pL').test('\uA7CB')).toBe(true);
    expect(await matches('\\pL', '\uA7CB')).toBe(false);
    // Random patterns from regex syntax: none that validation accepts fails in DuckDB.
    const token = fc.constantFrom(
      ...['a', 'é', '.', '*', '+', '?', '{2}', '{1,3}', '{,2}', '(', ')', '(?:', '(?i)', '(?P<g>', '(?<g>'],
      ...['(?=', '[', ']', '^', '$', '|', '\\', '\\d', '\\pL', '\\p{', '}', 'Greek', 'Letter', '/', '-'],
      ...['\\b', '\\z', '\\Q', '\\E', '\\x{41}', '[:alpha:]', '\\1', '\\k<g>', '\\C', '\\u0041'],
    );
    await fc.assert(
      fc.asyncProperty(fc.array(token, { maxLength: 8 }), async (tokens) => {
        const p = tokens.join('');
        if (checkRegex(p) === undefined) expect(await accepts(p), p).toBe(true);
      }),
      { numRuns: 1500 },
    );
  });
});
