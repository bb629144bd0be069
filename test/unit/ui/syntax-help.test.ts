import { describe, expect, it } from 'vitest';
import { parseQuery, parseTableQuery } from '../../../src/syntax/parse-query.js';
import { hasPipes } from '../../../ui/src/pages/search/query.js';
import { SYNTAX_SECTIONS } from '../../../ui/src/pages/search/syntax-examples.js';

// The query box's syntax help (ui/src/pages/search/syntax-examples.ts) shows only queries
// the server takes: each example parsed by the server's own parser, those with pipes as
// the query type Table runs them.

const examples = SYNTAX_SECTIONS.flatMap((s) => s.examples.map((e) => [s.title, e.query] as const));

describe('the syntax help’s examples', () => {
  it.each(examples)('%s: %s parses', (_section, query) => {
    if (hasPipes(query)) expect(parseTableQuery(query).program).toBeDefined();
    else expect(parseQuery(query)).toBeDefined();
  });

  it('covers words, phrases, fields, ranges, wildcards, regexes, booleans and pipes', () => {
    const all = examples.map(([, q]) => q);
    expect(all.some((q) => /^"[^"]+"$/.test(q))).toBe(true);
    expect(all.some((q) => /\[\S+ TO \S+\]/.test(q))).toBe(true);
    expect(all.some((q) => /:\S*\*/.test(q))).toBe(true);
    expect(all.some((q) => /:\/.+\/$/.test(q))).toBe(true);
    for (const word of ['AND', 'OR', 'NOT', '| stats', '| top', '| timechart', '| sort', '| limit'])
      expect(all.some((q) => q.includes(word))).toBe(true);
    // Every example once: a click on one is unambiguous.
    expect(new Set(all).size).toBe(all.length);
  });
});
