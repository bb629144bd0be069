import { describe, expect, it } from 'vitest';
import { SEVERITIES } from '../../../src/core/event.js';
import {
  cond,
  lowerCond,
  NOTHING,
  parseSeverityValue,
  SEVERITY_ORDER,
  severityRank,
  text,
} from '../../../src/filter/ast.js';
import { compilePredicate, type EventLike } from '../../../src/filter/evaluate.js';
import { checkRegex } from '../../../src/filter/regex.js';
import { eventComparator } from '../../../src/filter/sort.js';
import { parseSeverity } from '../../../src/ingest/column-values.js';
import { explain } from '../../../src/syntax/explain.js';
import { parseFilter } from '../../../src/syntax/parse-filter.js';
import { parseQuery } from '../../../src/syntax/parse-query.js';

describe('severity', () => {
  it('ranks debug lowest and emergency highest', () => {
    expect(SEVERITY_ORDER).toEqual([
      'debug',
      'info',
      'notice',
      'warning',
      'error',
      'critical',
      'alert',
      'emergency',
    ]);
    expect(severityRank('debug')).toBe(0);
    expect(severityRank('emergency')).toBe(7);
    expect(severityRank('ERROR')).toBeUndefined();
    expect(severityRank(null)).toBeUndefined();
  });

  it('is the parser ingest reads levels with: names, aliases, syslog codes, pino levels', () => {
    const words = ['emerg', 'panic', 'crit', 'fatal', 'err', 'warn', 'information', 'informational', 'trace'];
    for (const v of [...SEVERITIES, ...words, ...words.map((w) => w.toUpperCase()), ' Err ']) {
      expect(parseSeverityValue(v), v).toBe(parseSeverity(v));
    }
    for (let code = 0; code <= 7; code++) {
      expect(parseSeverityValue(code)).toBe(parseSeverity(code));
      expect(parseSeverityValue(String(code))).toBe(parseSeverity(String(code)));
    }
    // A record's `level: 30` is stored as info, and a filter's `severity:30` names info too.
    for (const [code, name] of [
      [10, 'debug'],
      [20, 'debug'],
      [30, 'info'],
      [40, 'warning'],
      [50, 'error'],
      [60, 'critical'],
    ] as const) {
      expect(parseSeverityValue(code)).toBe(name);
      expect(parseSeverityValue(String(code))).toBe(name);
      expect(parseSeverity(code)).toBe(name);
    }
    expect(lowerCond(cond('severity', 'eq', 30))).toEqual(lowerCond(cond('severity', 'eq', 'info')));
    for (const v of [8, -1, 1.5, 35, 'bogus', '', true, null, ['info']])
      expect(parseSeverityValue(v), String(v)).toBeUndefined();
  });

  it('lowers relations to the names that satisfy them and canonicalises equality', () => {
    expect(lowerCond(cond('severity', 'gte', 'error'))).toEqual(
      cond('severity', 'in', ['error', 'critical', 'alert', 'emergency']),
    );
    // Code 2 is critical: "less than critical" (codes count the other way round).
    expect(lowerCond(cond('severity', 'lt', 2))).toEqual(
      cond('severity', 'in', ['debug', 'info', 'notice', 'warning', 'error']),
    );
    expect(lowerCond(cond('severity', 'between', ['info', 'warn']))).toEqual(
      cond('severity', 'in', ['info', 'notice', 'warning']),
    );
    expect(lowerCond(cond('severity', 'between', ['error', 'info']))).toBe(NOTHING);
    expect(lowerCond(cond('severity', 'gt', 'emergency'))).toBe(NOTHING);
    expect(lowerCond(cond('severity', 'gt', 'bogus'))).toBe(NOTHING);
    expect(lowerCond(cond('severity', 'eq', 'ERR'))).toEqual(cond('severity', 'eq', 'error'));
    expect(lowerCond(cond('severity', 'not_in', ['warn', 'x']))).toEqual(
      cond('severity', 'not_in', ['warning', 'x']),
    );
    // Already lowered, and other fields: the node itself (a backend's recursion ends).
    const lowered = cond('severity', 'in', ['error', 'critical']);
    expect(lowerCond(lowered)).toBe(lowered);
    const other = cond('level', 'gte', 'error');
    expect(lowerCond(other)).toBe(other);
    const textual = cond('severity', 'contains', 'err');
    expect(lowerCond(textual)).toBe(textual);
  });

  it('the evaluator compares by rank', () => {
    const events: EventLike[] = SEVERITY_ORDER.map((severity) => ({ severity }));
    const selects = (q: string) => events.filter(compilePredicate(parseQuery(q))).map((e) => e.severity);
    expect(selects('severity:>=error')).toEqual(['error', 'critical', 'alert', 'emergency']);
    expect(selects('severity:<=err')).toEqual(['debug', 'info', 'notice', 'warning', 'error']);
    expect(selects('severity:[info TO 4]')).toEqual(['info', 'notice', 'warning']);
    expect(selects('NOT severity:>info')).toEqual(['debug', 'info']);
    expect(selects('severity:CRIT')).toEqual(['critical']);
  });

  it('refuses relations with values that are no severity, in both front ends', () => {
    expect(() => parseQuery('severity:>loud')).toThrow(/compares by rank/);
    expect(() => parseQuery('severity:[info TO 9]')).toThrow(/compares by rank/);
    expect(() => parseFilter([['severity', 'gte', 'loud']])).toThrow(
      /filter\[0\]\[2\]: "severity" compares by rank/,
    );
    // Equality stays lenient: an unknown value simply matches nothing.
    expect(parseQuery('severity:loud')).toEqual(cond('severity', 'eq', 'loud'));
  });
});

describe('message:word', () => {
  it.each([
    ['message:refused', text('refused')],
    ['message:"connection refused"', text('connection refused', true)],
    ['message:refus*', text('refus')],
    ['message:*fused', text('fused')],
    ['message:re*sed', cond('message', 'regex', '(?is)re.*sed')],
    ['message:*', cond('message', 'exists')],
    ['message:/^x$/', cond('message', 'regex', '^x$')],
    ['message:>m', cond('message', 'gt', 'm')],
    ['message:10.0.0.0/8', cond('message', 'cidr', '10.0.0.0/8')],
  ])('%s', (query, ast) => {
    expect(parseQuery(query)).toEqual(ast);
  });

  it('matches what the bare word matches; other fields stay exact', () => {
    const events: EventLike[] = [
      { message: 'Connection REFUSED' },
      { message: 'refused' },
      { message: 'ok' },
    ];
    const selects = (q: string) => events.filter(compilePredicate(parseQuery(q))).map((e) => e.message);
    expect(selects('message:refused')).toEqual(selects('refused'));
    expect(selects('message:refused')).toEqual(['Connection REFUSED', 'refused']);
    expect(parseQuery('host:web')).toEqual(cond('host', 'eq', 'web'));
  });

  it('renders exact message conditions as anchored regexes, which parse back to the same', () => {
    const events: EventLike[] = [
      { message: 'a.b' },
      { message: 'A.B' },
      { message: 'xa.b' },
      { message: 'a(b' },
    ];
    for (const node of [
      cond('message', 'eq', 'a.b'),
      cond('message', 'ne', 'a.b'),
      cond('message', 'in', ['a.b', 'a(b', 42]),
      cond('message', 'not_in', ['a(b']),
      cond('message', 'startswith', 'a'),
      cond('message', 'endswith', '.b'),
    ]) {
      const rendered = explain(node);
      expect(rendered).toMatch(/message:\//);
      const back = events.filter(compilePredicate(parseQuery(rendered)));
      expect(back, rendered).toEqual(events.filter(compilePredicate(node)));
    }
    expect(explain(cond('message', 'eq', 'a.b/c'))).toBe('message:/^a\\.b\\/c$/');
  });
});

describe('regex validation refuses what the stores RE2 refuses', () => {
  it.each(['(?<n>a)', '\\p{Letter}', '\\p{Script=Greek}', '\\p{Emoji}', '\\p{gc=Lu}'])('%s', (p) => {
    expect(checkRegex(p)).toMatch(/RE2/);
  });
  it.each(['(?P<n>a)', '\\p{L}', '\\pL', '\\p{Greek}', 'a/b', '[/]', ''])('accepts %s', (p) => {
    expect(checkRegex(p)).toBeUndefined();
  });
});

describe('eventComparator', () => {
  const ids = (events: EventLike[], sort: Array<{ field: string; desc: boolean }>) =>
    [...events].sort(eventComparator(sort)).map((e) => e.ev_id);

  it('sorts extra fields numbers first, then text, missing last, in both directions', () => {
    const events: EventLike[] = ['999', '1979', 'abc', '5', undefined, '-0', '0', 'NaN'].map((d, i) => ({
      ev_id: `e${i}`,
      fields: d === undefined ? {} : ({ d } as Record<string, string>),
    }));
    expect(ids(events, [{ field: 'd', desc: false }])).toEqual([
      'e5',
      'e6',
      'e3',
      'e0',
      'e1',
      'e7',
      'e2',
      'e4',
    ]);
    expect(ids(events, [{ field: 'd', desc: true }])).toEqual([
      'e1',
      'e0',
      'e3',
      'e6',
      'e5',
      'e2',
      'e7',
      'e4',
    ]);
  });

  it('sorts severity by rank and ties by ev_id in the first direction', () => {
    const events: EventLike[] = [
      { ev_id: 'a', severity: 'info' },
      { ev_id: 'b', severity: 'emergency' },
      { ev_id: 'c', severity: null },
      { ev_id: 'd', severity: 'info' },
      { ev_id: 'e', severity: 'debug' },
    ];
    expect(ids(events, [{ field: 'severity', desc: true }])).toEqual(['b', 'd', 'a', 'e', 'c']);
    expect(ids(events, [{ field: 'severity', desc: false }])).toEqual(['e', 'a', 'd', 'b', 'c']);
  });
});
