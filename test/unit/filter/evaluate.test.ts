import { describe, expect, it } from 'vitest';
import { and, cond, type FilterNode, not, or, TRUE, text } from '../../../src/filter/ast.js';
import { compareCodePoints, compilePredicate, type EventLike } from '../../../src/filter/evaluate.js';

const TS = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const TS_SECONDS = TS / 1000;

const event: EventLike = {
  ev_id: '01HX0000000000000000000000',
  ts: TS,
  received_at: TS + 1000,
  stored_at: TS + 2000,
  host: 'web-01',
  app: 'nginx',
  severity: 'error',
  facility: null,
  message: 'GET /index.html failed: Timeout after 30s',
  src_ip: '10.1.2.3',
  src_port: 51234,
  dst_ip: '2001:db8::1',
  dst_port: 443,
  user: null,
  action: 'login',
  status: 503,
  bytes: 1024,
  source: 'api',
  fields: {
    'http.method': 'GET',
    latency: '250',
    tag: 'Alpha',
    empty: '',
    mapped: '::ffff:10.9.9.9',
    emoji: '\u{1F600}',
  },
};

const matches = (node: FilterNode, e: EventLike = event) => compilePredicate(node)(e);

type Case = readonly [string, FilterNode, boolean];

const table = (cases: readonly Case[]) => {
  it.each(cases)('%s', (_name, node, expected) => {
    expect(matches(node)).toBe(expected);
  });
};

describe('eq / ne', () => {
  table([
    ['string column, exact', cond('host', 'eq', 'web-01'), true],
    ['string column, case-sensitive', cond('host', 'eq', 'WEB-01'), false],
    ['integer column, number', cond('status', 'eq', 503), true],
    ['integer column, numeric string', cond('status', 'eq', '503'), true],
    ['integer column, numerically equal string', cond('status', 'eq', '503.0'), true],
    ['integer column, non-numeric string', cond('status', 'eq', 'abc'), false],
    ['integer column, boolean', cond('status', 'eq', true), false],
    ['time column, Unix seconds', cond('ts', 'eq', TS_SECONDS), true],
    ['time column, numeric string seconds', cond('ts', 'eq', String(TS_SECONDS)), true],
    ['time column, ISO', cond('ts', 'eq', '2024-05-01T10:00:00.123Z'), true],
    ['time column, ISO with offset', cond('ts', 'eq', '2024-05-01T12:00:00.123+02:00'), true],
    ['time column, other instant', cond('ts', 'eq', '2024-05-01T10:00:00Z'), false],
    ['time column, garbage', cond('ts', 'eq', 'garbage'), false],
    ['ip column', cond('src_ip', 'eq', '10.1.2.3'), true],
    ['map field', cond('http.method', 'eq', 'GET'), true],
    ['map field, number compares as its text', cond('latency', 'eq', 250), true],
    ['map field, empty string', cond('empty', 'eq', ''), true],
    ['missing column (null)', cond('user', 'eq', 'x'), false],
    ['unknown field', cond('nope', 'eq', 'x'), false],
    ['prototype key is not a field', cond('constructor', 'eq', 'x'), false],
    ['ne string', cond('host', 'ne', 'web-01'), false],
    ['ne string other', cond('host', 'ne', 'db-01'), true],
    ['ne integer', cond('status', 'ne', 503), false],
    ['ne integer non-numeric is true', cond('status', 'ne', 'abc'), true],
    ['ne time', cond('ts', 'ne', TS_SECONDS), false],
    ['ne ip', cond('src_ip', 'ne', '10.1.2.3'), false],
    ['ne map', cond('http.method', 'ne', 'POST'), true],
    ['ne missing is true', cond('user', 'ne', 'x'), true],
    ['ne unknown is true', cond('nope', 'ne', 'x'), true],
  ]);
});

describe('in / not_in', () => {
  table([
    ['string column', cond('host', 'in', ['a', 'web-01']), true],
    ['integer column, mixed values', cond('status', 'in', ['500', 503]), true],
    ['integer column, no match', cond('status', 'in', [500, 'x']), false],
    ['time column', cond('ts', 'in', [0, '2024-05-01T10:00:00.123Z']), true],
    ['ip column', cond('dst_ip', 'in', ['2001:db8::1']), true],
    ['map field', cond('tag', 'in', ['alpha', 'Alpha']), true],
    ['missing', cond('user', 'in', ['x']), false],
    ['not_in string', cond('host', 'not_in', ['web-01']), false],
    ['not_in integer', cond('status', 'not_in', [200, 404]), true],
    ['not_in time', cond('ts', 'not_in', [TS_SECONDS]), false],
    ['not_in ip', cond('src_ip', 'not_in', ['10.1.2.4']), true],
    ['not_in map', cond('tag', 'not_in', ['Alpha']), false],
    ['not_in missing is true', cond('user', 'not_in', ['x']), true],
  ]);
});

describe('contains / not_contains / startswith / endswith', () => {
  table([
    ['contains, case-insensitive', cond('message', 'contains', 'TIMEOUT'), true],
    ['contains string column', cond('host', 'contains', 'EB-0'), true],
    ['contains integer column uses decimal text', cond('status', 'contains', '50'), true],
    ['contains time column is false', cond('ts', 'contains', '1'), false],
    ['contains ip column', cond('src_ip', 'contains', '1.2'), true],
    ['contains map field', cond('tag', 'contains', 'alp'), true],
    ['contains empty needle', cond('host', 'contains', ''), true],
    ['contains missing', cond('user', 'contains', ''), false],
    ['not_contains', cond('message', 'not_contains', 'timeout'), false],
    ['not_contains other', cond('host', 'not_contains', 'db'), true],
    ['not_contains integer', cond('status', 'not_contains', '9'), true],
    ['not_contains time column is true', cond('ts', 'not_contains', '1'), true],
    ['not_contains ip', cond('dst_ip', 'not_contains', 'db8'), false],
    ['not_contains map', cond('tag', 'not_contains', 'ALPHA'), false],
    ['not_contains missing is true', cond('user', 'not_contains', 'x'), true],
    ['startswith', cond('host', 'startswith', 'web'), true],
    ['startswith case-sensitive', cond('host', 'startswith', 'Web'), false],
    ['startswith integer', cond('status', 'startswith', '5'), true],
    ['startswith time is false', cond('ts', 'startswith', '1'), false],
    ['startswith ip', cond('src_ip', 'startswith', '10.'), true],
    ['startswith map', cond('tag', 'startswith', 'Al'), true],
    ['startswith missing', cond('user', 'startswith', ''), false],
    ['endswith', cond('host', 'endswith', '-01'), true],
    ['endswith case-sensitive', cond('tag', 'endswith', 'HA'), false],
    ['endswith integer', cond('status', 'endswith', '03'), true],
    ['endswith time is false', cond('ts', 'endswith', '3'), false],
    ['endswith ip', cond('dst_ip', 'endswith', '::1'), true],
    ['endswith missing', cond('facility', 'endswith', ''), false],
  ]);
});

describe('regex', () => {
  table([
    ['anchored match', cond('host', 'regex', '^web-\\d+$'), true],
    ['unanchored search', cond('host', 'regex', 'eb-0'), true],
    ['case-sensitive by default', cond('message', 'regex', 'timeout'), false],
    ['(?i) flag', cond('message', 'regex', '(?i)timeout'), true],
    ['integer column as text', cond('status', 'regex', '^5\\d\\d$'), true],
    ['time column is false', cond('ts', 'regex', '.'), false],
    ['ip column', cond('src_ip', 'regex', '^10\\.'), true],
    ['map field', cond('http.method', 'regex', '^(GET|HEAD)$'), true],
    ['RE2 named group and \\z', cond('tag', 'regex', '(?P<x>Al)pha\\z'), true],
    ['POSIX class', cond('tag', 'regex', '^[[:upper:]][[:lower:]]+$'), true],
    ['\\Q..\\E literal', cond('message', 'regex', '\\Q/index.html\\E'), true],
    ['missing', cond('user', 'regex', ''), false],
    ['invalid pattern in a hand-built AST matches nothing', cond('host', 'regex', '(?=w)'), false],
  ]);
});

describe('gt / gte / lt / lte / between', () => {
  table([
    ['integer gt', cond('status', 'gt', 500), true],
    ['integer gt numeric string', cond('status', 'gt', '500'), true],
    ['integer gt equal', cond('status', 'gt', 503), false],
    ['integer gte equal', cond('status', 'gte', 503), true],
    ['integer lt', cond('status', 'lt', 600), true],
    ['integer lte equal', cond('status', 'lte', 503), true],
    ['integer non-numeric value is false', cond('status', 'gt', 'abc'), false],
    ['time gt seconds', cond('ts', 'gt', TS_SECONDS - 1), true],
    ['time gt ISO', cond('ts', 'gt', '2024-05-01T10:00:00Z'), true],
    ['time lt date', cond('ts', 'lt', '2024-05-02'), true],
    ['time lte exact ms', cond('ts', 'lte', '2024-05-01T10:00:00.123Z'), true],
    ['time gte later', cond('ts', 'gte', '2024-05-01T10:00:01Z'), false],
    ['string lexicographic gt', cond('host', 'gt', 'web'), true],
    ['string lexicographic lt', cond('host', 'lt', 'web'), false],
    ['string with number value, non-numeric field', cond('host', 'gt', 5), false],
    ['ip lexicographic', cond('src_ip', 'gte', '10.1'), true],
    ['map field, number compares numerically', cond('latency', 'gt', 3), true],
    ['map field, string compares as text', cond('latency', 'gt', '3'), false],
    ['map field, string lexicographic', cond('latency', 'lt', '3'), true],
    ['code point order, not UTF-16 order', cond('emoji', 'gt', '\uFFFD'), true],
    ['missing', cond('user', 'gt', ''), false],
    ['between integer inclusive', cond('status', 'between', [500, 503]), true],
    ['between integer outside', cond('status', 'between', [504, 599]), false],
    ['between integer, numeric strings', cond('status', 'between', ['500', '599']), true],
    ['between time ISO', cond('ts', 'between', ['2024-05-01', '2024-05-02']), true],
    ['between time seconds', cond('ts', 'between', [TS_SECONDS, TS_SECONDS]), true],
    ['between string', cond('host', 'between', ['a', 'x']), true],
    ['between ip', cond('src_ip', 'between', ['10.0', '10.2']), true],
    ['between map numbers', cond('latency', 'between', [200, 300]), true],
    ['between map strings', cond('latency', 'between', ['200', '3']), true],
    ['between missing', cond('user', 'between', ['a', 'z']), false],
  ]);
});

describe('exists / not_exists / cidr / text / logic', () => {
  table([
    ['exists column', cond('host', 'exists'), true],
    ['exists integer', cond('status', 'exists'), true],
    ['exists time', cond('ts', 'exists'), true],
    ['exists ip', cond('src_ip', 'exists'), true],
    ['exists null column', cond('user', 'exists'), false],
    ['exists map', cond('tag', 'exists'), true],
    ['exists empty map value', cond('empty', 'exists'), true],
    ['exists unknown', cond('nope', 'exists'), false],
    ['exists stored_at', cond('stored_at', 'exists'), true],
    ['not_exists null column', cond('facility', 'not_exists'), true],
    ['not_exists present', cond('host', 'not_exists'), false],
    ['not_exists unknown', cond('nope', 'not_exists'), true],
    ['cidr IPv4', cond('src_ip', 'cidr', '10.0.0.0/8'), true],
    ['cidr IPv4 outside', cond('src_ip', 'cidr', '192.168.0.0/16'), false],
    ['cidr IPv6', cond('dst_ip', 'cidr', '2001:db8::/32'), true],
    ['cidr IPv6 outside', cond('dst_ip', 'cidr', '2001:db9::/32'), false],
    ['cidr IPv4 block, IPv6 address', cond('dst_ip', 'cidr', '10.0.0.0/8'), false],
    ['cidr IPv4-mapped IPv6 in a map field', cond('mapped', 'cidr', '10.0.0.0/8'), true],
    ['cidr non-IP string', cond('host', 'cidr', '10.0.0.0/8'), false],
    ['cidr integer column', cond('status', 'cidr', '0.0.0.0/0'), false],
    ['cidr time column', cond('ts', 'cidr', '0.0.0.0/0'), false],
    ['cidr missing', cond('user', 'cidr', '0.0.0.0/0'), false],
    ['text, case-insensitive substring', text('TIMEOUT after'), true],
    ['text phrase', text('index.html failed', true), true],
    ['text no match', text('success'), false],
    ['true', TRUE, true],
    ['and', and(text('timeout'), cond('status', 'eq', 503)), true],
    ['and false', and(text('timeout'), cond('status', 'eq', 200)), false],
    ['or', or(text('nothing'), cond('status', 'eq', 503)), true],
    ['or false', or(text('nothing'), cond('status', 'eq', 200)), false],
    ['not', not(text('timeout')), false],
    ['not of a missing comparison is true', not(cond('user', 'gt', 'a')), true],
  ]);

  it('text on a missing message is false, and its negation true', () => {
    const noMessage: EventLike = { ...event, message: null };
    expect(matches(text('x'), noMessage)).toBe(false);
    expect(matches(not(text('x')), noMessage)).toBe(true);
  });

  it('works without a fields map', () => {
    expect(matches(cond('tag', 'exists'), { host: 'a' })).toBe(false);
    expect(matches(cond('host', 'eq', 'a'), { host: 'a' })).toBe(true);
    expect(matches(cond('stored_at', 'exists'), { host: 'a' })).toBe(false);
  });
});

describe('compareCodePoints', () => {
  it('orders by code point, i.e. UTF-8 byte order', () => {
    expect(compareCodePoints('a', 'b')).toBeLessThan(0);
    expect(compareCodePoints('ab', 'a')).toBeGreaterThan(0);
    expect(compareCodePoints('x', 'x')).toBe(0);
    // UTF-16 code units would put the emoji (a surrogate pair) below U+FFFD.
    expect(compareCodePoints('\u{1F600}', '\uFFFD')).toBeGreaterThan(0);
    expect(compareCodePoints('\uE000', '\u{10000}')).toBeLessThan(0);
    const sample = ['\u{1F600}', '\uFFFD', 'a', '\uE000', 'é', '\u{10000}'];
    const byUtf8 = [...sample].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect([...sample].sort(compareCodePoints)).toEqual(byUtf8);
  });
});
