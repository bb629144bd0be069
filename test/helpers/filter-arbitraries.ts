/**
 * fast-check arbitraries for events and filter ASTs, shared by the property tests (SQL
 * against the evaluator, the trigger index against plain evaluation). Values are drawn
 * from small pools full of edge cases (so conditions often hit) plus free-form values.
 */
import fc from 'fast-check';
import { type NormalisedEvent, SEVERITIES, type Severity } from '../../src/core/event.js';
import type { SortTerm } from '../../src/event-store/query-plan.js';
import {
  and,
  cond,
  type FilterNode,
  not,
  or,
  parseNumeric,
  type RangeValue,
  type Scalar,
  TRUE,
  text,
} from '../../src/filter/ast.js';
import { event } from '../event-store/filter-store.js';

const BASE_TS = Date.UTC(2024, 4, 1, 10);

const STRINGS = [
  '',
  'a',
  'A',
  'abc',
  'ABC',
  'web-01',
  'Web-01',
  'x"y',
  "it's",
  '50%',
  'a_b',
  '%',
  '_',
  'é',
  'É',
  'naïve CAFÉ',
  'ß',
  'İx',
  'ix',
  'İSTANBUL',
  'ΑΣ',
  'ΑΣ Β',
  'σς',
  'Ɤ',
  'ɤ',
  '😀',
  '\uFFFD',
  '\uFEFFbom',
  'a\u0000b',
  'two\nlines',
  '42',
  '042',
  '-7',
  '+3',
  '3.5',
  '1e3',
  ' 42',
  '0x10',
  'Infinity',
  'NaN',
  '1e400',
  '.5',
  '5.',
  '-0',
  "'; DROP TABLE events; --",
] as const;

const IPS = [
  '10.1.2.3',
  '10.0.0.0',
  '10.255.255.255',
  '10.1.3.7',
  '192.168.1.20',
  '0.0.0.0',
  '255.255.255.255',
  '010.1.2.3',
  '1.2.3',
  '1.2.3.4.5',
  ' 10.1.2.3',
  '2001:db8::1',
  '2001:DB8::ff',
  '::1',
  '::',
  '::ffff:10.1.2.3',
  '::ffff:a01:203',
  '::ffff:192.168.1.1',
  '::10.1.2.3',
  'fe80::1%eth0',
  '\uFEFF::1',
  '1:2:3:4:5:6:7::',
  'not-an-ip',
] as const;

const CIDRS = [
  '10.0.0.0/8',
  '10.1.2.3/32',
  '10.1.2.0/23',
  '10.1.2.2/31',
  '192.168.0.0/16',
  '0.0.0.0/0',
  '1.2.3.4/7',
  '2001:db8::/32',
  '::/0',
  '::ffff:0:0/96',
  '::ffff:10.0.0.0/104',
  '::ffff:10.1.2.3/128',
  '::ffff:10.1.2.0/121',
  '::ffff:0:0/100',
  '::/95',
  '::1/128',
  'fe80::/10',
  'bad',
  '10.0.0.0/33',
  '10.0.0.0',
] as const;

/** RE2 patterns: the evaluator and the stores both run them with RE2. */
const REGEXES = [
  '',
  '^web',
  'eb-\\d+$',
  '(?i)abc',
  '(?i)WEB',
  '(?is)w.*B',
  'w(?i)EB',
  'a.c',
  '^$',
  '\\d',
  '^[[:upper:]]',
  '^[0-9]+$',
  '%',
  '_',
  'é',
  '\\.',
  'x|y',
  '^10\\.1',
  '::',
  '^-',
  '\\x{1F600}',
  "'",
  '[^[:alpha:]]',
  '\\pL',
  '(?U)a+',
  '(?s)a.b',
  '\\Qa.c\\E',
  '\\Q/x\\E',
  '(a+)+$',
  '\\bweb\\b',
  '(?i)É',
] as const;

const NEEDLES = [...STRINGS, 'i', 'I', 'σ', 'ς', 'ας', 'i\u0307', 'ɤ', 'eb', 'EB', '10.', '::', '0', '.'];

const MAP_KEYS = ['k', 'n', 'ip', 'we"ird', "it's", 'a.b'] as const;
const FIELDS = [
  'host',
  'message',
  'user',
  'severity',
  'src_ip',
  'dst_ip',
  'status',
  'bytes',
  'src_port',
  'ts',
  'received_at',
  'stored_at',
  'ev_id',
  ...MAP_KEYS,
  'nope',
] as const;

/** Severity values a filter may name: names, aliases in any case, syslog codes, and junk. */
const SEVERITY_VALUES = [
  ...SEVERITIES,
  'err',
  'WARN',
  'Crit',
  'emerg',
  'trace',
  'informational',
  ' error ',
  0,
  3,
  7,
  '4',
  '3.0',
  8,
  -1,
  1.5,
  'bogus',
  '',
  'errors',
] as const;

/** Extra-field values that are numbers as text (and near misses), for numeric order. */
const NUMERIC_TEXTS = [
  '999',
  '1979',
  '5',
  '05',
  '12.5',
  '-3',
  '0',
  '-0',
  '+0',
  '1e3',
  '1000',
  '1000.0',
  '.5',
  '5.',
  '9007199254740993',
  '9007199254740992',
  '1e400',
  '-1e400',
  'NaN',
  'Infinity',
  ' 42',
  '42 ',
  '0x10',
  '1_000',
  'abc',
  '',
] as const;

const INTS = [-2147483648, -1, 0, 1, 7, 42, 200, 404, 503, 2147483647] as const;
const TS_OFFSETS = [0, 1, 999, 1000, -1000, 86_400_000] as const;

const nullable = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: null, freq: 4 });
const str = fc.oneof(fc.constantFrom(...STRINGS), fc.string({ maxLength: 6 }));
const ip = fc.oneof(fc.constantFrom(...IPS), fc.ipV4(), fc.ipV6());
const smallInt = fc.oneof(fc.constantFrom(...INTS), fc.integer({ min: -5, max: 600 }));
// Beyond 2^53 text operators differ (see the compiler's header), so bytes stay safe.
const bytes = fc.oneof(fc.constantFrom(0, 1024, Number.MAX_SAFE_INTEGER), fc.integer({ min: -2, max: 5000 }));
const tsMs = fc.oneof(
  fc.constantFrom(...TS_OFFSETS).map((o) => BASE_TS + o),
  fc.constantFrom(0, -1000),
  fc.integer({ min: BASE_TS - 10_000, max: BASE_TS + 10_000 }),
);

const numericText = fc.oneof(
  fc.constantFrom(...NUMERIC_TEXTS),
  fc.integer({ min: -2000, max: 2000 }).map(String),
  // Not ±5e-324, the smallest double: ClickHouse 18.16 reads it as 0 (docs/query-language.md).
  fc
    .double({ noNaN: true })
    .filter((x) => Math.abs(x) !== Number.MIN_VALUE)
    .map(String),
);
const mapValue = fc.oneof(str, ip, numericText, numericText);
// What ingest stores, plus a value that is no severity (a store written by other means).
const storedSeverity = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...SEVERITIES) },
  { weight: 1, arbitrary: fc.constant('bogus' as Severity) },
);

const eventArb = (id: string): fc.Arbitrary<NormalisedEvent> =>
  fc
    .record({
      ts: tsMs,
      received_at: tsMs,
      host: nullable(str),
      message: nullable(str),
      user: nullable(str),
      severity: nullable(storedSeverity),
      src_ip: nullable(ip),
      dst_ip: nullable(fc.oneof(ip, str)),
      status: nullable(smallInt),
      bytes: nullable(bytes),
      src_port: nullable(fc.integer({ min: 0, max: 65535 })),
      fields: fc.dictionary(fc.constantFrom(...MAP_KEYS), mapValue, { maxKeys: 4 }),
    })
    .map((r) => event(id, r));

export const eventsArb = fc
  .integer({ min: 1, max: 12 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => eventArb(`e${String(i).padStart(2, '0')}`))));

// ---------------------------------------------------------------------------------------
// Values: pools that hit the stored values, plus free-form ones.

const timeValue = fc.oneof(
  tsMs.map((ms) => ms / 1000),
  tsMs.map((ms) => new Date(ms).toISOString()),
  tsMs.map((ms) => String(ms / 1000)),
  fc.constantFrom('2024-05-01', '2024-05-01T12:00:00+02:00', 'garbage', 1e300, -1e300),
);
const numberValue = fc.oneof(
  smallInt,
  fc.constantFrom(0.5, -1.5, 503.5, 1e300, -1e300, 2 ** 53, 5e9, -0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const stringValue = fc.oneof(str, ip, smallInt.map(String), fc.constantFrom('503.0', '1e3', 'abc'));
const ordered: fc.Arbitrary<string | number> = fc.oneof(numberValue, stringValue, timeValue);
const scalar: fc.Arbitrary<Scalar> = fc.oneof(ordered, fc.boolean());
const range: fc.Arbitrary<RangeValue> = fc.oneof(
  fc.tuple(numberValue, numberValue),
  fc.tuple(fc.oneof(stringValue, timeValue.map(String)), fc.oneof(stringValue, timeValue.map(String))),
);

const field = fc.constantFrom(...FIELDS);
const severityValue = fc.constantFrom(...SEVERITY_VALUES);
const severityRange: fc.Arbitrary<RangeValue> = fc.oneof(
  fc.tuple(fc.constantFrom(...SEVERITIES), fc.constantFrom(...SEVERITIES)),
  fc.tuple(fc.integer({ min: -1, max: 8 }), fc.integer({ min: -1, max: 8 })),
  fc.tuple(fc.constantFrom('err', 'bogus', 'WARN'), fc.constantFrom(...SEVERITIES)),
);
/** Conditions on `severity` with its values: rank relations, aliases, codes. */
const severityCondition: fc.Arbitrary<FilterNode> = fc.oneof(
  fc
    .tuple(fc.constantFrom('gt', 'gte', 'lt', 'lte'), severityValue)
    .map(([op, v]) => cond('severity', op, v)),
  fc.tuple(fc.constantFrom('eq', 'ne'), severityValue).map(([op, v]) => cond('severity', op, v)),
  severityRange.map((v) => cond('severity', 'between', v)),
  fc
    .tuple(fc.constantFrom('in', 'not_in'), fc.array(severityValue, { minLength: 1, maxLength: 3 }))
    .map(([op, v]) => cond('severity', op, v)),
);
/** Relations with numbers on extra fields holding numeric text. */
const numericCondition: fc.Arbitrary<FilterNode> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom(...MAP_KEYS),
      fc.constantFrom('gt', 'gte', 'lt', 'lte'),
      fc.oneof(
        numberValue,
        numericText.map((t) => parseNumeric(t) ?? 0),
      ),
    )
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(fc.constantFrom(...MAP_KEYS), numberValue, numberValue)
    .map(([f, lo, hi]) => cond(f, 'between', [lo, hi])),
);
const needle = fc.oneof(fc.constantFrom(...NEEDLES), fc.string({ maxLength: 3 }));

export const condition: fc.Arbitrary<FilterNode> = fc.oneof(
  fc.tuple(field, fc.constantFrom('eq', 'ne'), scalar).map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(field, fc.constantFrom('in', 'not_in'), fc.array(scalar, { minLength: 1, maxLength: 4 }))
    .map(([f, op, v]) => cond(f, op, v)),
  fc.tuple(field, fc.constantFrom('gt', 'gte', 'lt', 'lte'), ordered).map(([f, op, v]) => cond(f, op, v)),
  fc.tuple(field, range).map(([f, v]) => cond(f, 'between', v)),
  fc
    .tuple(field, fc.constantFrom('contains', 'not_contains', 'startswith', 'endswith'), needle)
    .map(([f, op, v]) => cond(f, op, v)),
  fc.tuple(field, fc.constantFrom(...REGEXES)).map(([f, v]) => cond(f, 'regex', v)),
  fc.tuple(field, fc.constantFrom(...CIDRS)).map(([f, v]) => cond(f, 'cidr', v)),
  fc.tuple(field, fc.constantFrom('exists', 'not_exists')).map(([f, op]) => cond(f, op)),
  needle.map((v) => text(v)),
  severityCondition,
  numericCondition,
);

/** Fields to sort by: every kind of sort (filter/sort.ts), missing values included. */
const SORT_FIELDS = [
  'ts',
  'received_at',
  'severity',
  'host',
  'message',
  'src_ip',
  'status',
  'bytes',
  'src_port',
  ...MAP_KEYS,
  'nope',
] as const;

export const sortTerms: fc.Arbitrary<SortTerm[]> = fc.array(
  fc.record({ field: fc.constantFrom(...SORT_FIELDS), desc: fc.boolean() }),
  { maxLength: 3 },
);

export const filter: fc.Arbitrary<FilterNode> = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    condition,
    fc.constant(TRUE),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((items) => and(...items)),
    fc.tuple(tie('node'), fc.array(tie('node'), { maxLength: 2 })).map(([first, rest]) => or(first, ...rest)),
    tie('node').map(not),
  ),
})).node;
