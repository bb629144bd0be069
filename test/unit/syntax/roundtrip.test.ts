import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { and, cond, type FilterNode, not, or, simplify, text } from '../../../src/filter/ast.js';
import { compilePredicate, type EventLike } from '../../../src/filter/evaluate.js';
import { explain } from '../../../src/syntax/explain.js';
import { parseQuery } from '../../../src/syntax/parse-query.js';

// Characters that exercise quoting and escaping in explain and the grammar.
const tricky = fc.constantFrom(
  'a',
  'B',
  'x',
  '1',
  '-',
  '*',
  ' ',
  '"',
  '\\',
  '/',
  ':',
  '(',
  ')',
  '.',
  'é',
  '😀',
  '[',
  '>',
);
const str = fc.string({ unit: tricky, maxLength: 6 });
const word = fc.constantFrom('web', 'db', 'AND', 'OR', 'NOT', 'TO', 'a-b', '_exists_', 'x.y@z');
const int = fc.integer({ min: -1000, max: 1000 });
const scalar = fc.oneof(str, word, int, fc.boolean());
const seconds = fc.integer({ min: 1714550000, max: 1714570000 });
const iso = fc.constantFrom(
  '2024-05-01',
  '2024-05-01T10:00:00Z',
  '2024-05-01T12:00:00.123+02:00',
  '2024-05-02',
);
const pattern = fc.constantFrom('^web', 'a/b', '\\d+$', '(?i)TIME', '[/x]', 'a\\/b', '');
const cidr = fc.constantFrom('10.0.0.0/8', '10.1.2.0/24', '::/0', '2001:db8::/32', '0.0.0.0/0');

const stringField = fc.constantFrom('host', 'message', 'src_ip', 'http.method', 'nope');
const integerField = fc.constant('status');
const timeField = fc.constant('ts');

const leaf: fc.Arbitrary<FilterNode> = fc.oneof(
  fc.tuple(fc.oneof(str, word), fc.boolean()).map(([v, phrase]) => text(v, phrase)),
  fc
    .tuple(fc.oneof(stringField, integerField, timeField), fc.constantFrom('exists', 'not_exists'))
    .map(([f, op]) => cond(f, op)),
  fc
    .tuple(fc.oneof(stringField, integerField), fc.constantFrom('eq', 'ne'), scalar)
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(timeField, fc.constantFrom('eq', 'ne'), fc.oneof(seconds, iso))
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(
      fc.oneof(stringField, integerField),
      fc.constantFrom('in', 'not_in'),
      fc.array(scalar, { minLength: 1, maxLength: 3 }),
    )
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(
      fc.oneof(stringField, integerField),
      fc.constantFrom('contains', 'not_contains', 'startswith', 'endswith'),
      str,
    )
    .map(([f, op, v]) => cond(f, op, v)),
  fc.tuple(fc.oneof(stringField, integerField), pattern).map(([f, v]) => cond(f, 'regex', v)),
  fc.tuple(stringField, cidr).map(([f, v]) => cond(f, 'cidr', v)),
  fc
    .tuple(stringField, fc.constantFrom('gt', 'gte', 'lt', 'lte'), fc.oneof(str, int))
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(integerField, fc.constantFrom('gt', 'gte', 'lt', 'lte'), fc.oneof(int, int.map(String)))
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(timeField, fc.constantFrom('gt', 'gte', 'lt', 'lte'), fc.oneof(seconds, iso))
    .map(([f, op, v]) => cond(f, op, v)),
  fc
    .tuple(stringField, fc.oneof(fc.tuple(int, int), fc.tuple(str, str)))
    .map(([f, v]) => cond(f, 'between', v)),
  fc.tuple(integerField, fc.tuple(int, int)).map(([f, v]) => cond(f, 'between', v)),
  fc
    .tuple(timeField, fc.oneof(fc.tuple(seconds, seconds), fc.tuple(iso, iso)))
    .map(([f, v]) => cond(f, 'between', v)),
);

const tree = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 3, depthSize: 'small' },
    leaf,
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map((items) => and(...items)),
    fc.array(tie('node'), { minLength: 1, maxLength: 3 }).map(([first, ...rest]) => or(first!, ...rest)),
    tie('node').map(not),
  ),
})).node;

const TS = Date.UTC(2024, 4, 1, 10, 0, 0, 123);
const events: EventLike[] = [
  {
    ts: TS,
    host: 'web-01',
    message: 'GET a/b 123 timeout',
    src_ip: '10.1.2.3',
    status: 503,
    fields: { 'http.method': 'GET', nope: 'x' },
  },
  {
    ts: TS + 86_400_000,
    host: 'AND',
    message: 'é😀 "quoted" \\ back',
    src_ip: '2001:db8::1',
    status: -5,
    fields: {},
  },
  { ts: 0, host: null, message: null, src_ip: null, status: null, fields: { 'http.method': '*' } },
  { ts: TS, host: '1', message: 'a-b x.y@z web', src_ip: 'not-an-ip', status: 0, fields: { nope: '-1' } },
  {
    ts: TS - 1,
    host: 'a b',
    message: 'B:(x)',
    src_ip: '::ffff:10.0.0.1',
    status: 200,
    fields: { nope: 'a/b' },
  },
];

const results = (node: FilterNode) => {
  const p = compilePredicate(node);
  return events.map((e) => p(e));
};

describe('explain → parseQuery round trip (property)', () => {
  it('renders every AST as a query that matches the same events', () => {
    fc.assert(
      fc.property(tree, (ast) => {
        const rendered = explain(ast);
        const parsed = parseQuery(rendered);
        expect(results(parsed)).toEqual(results(ast));
        // Rendering is stable from the first parse on.
        expect(explain(parseQuery(explain(parsed)))).toBe(explain(parsed));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the structure of ASTs already in normal form', () => {
    fc.assert(
      fc.property(tree, (ast) => {
        const once = parseQuery(explain(ast));
        expect(parseQuery(explain(once))).toEqual(simplify(once));
      }),
      { numRuns: 200 },
    );
  });
});
