import { describe, expect, it } from 'vitest';
import { MARK_CHARS, queryTerms, splitMarks } from '../../../ui/src/pages/search/mark-terms.js';

const marked = (text: string, query: string) =>
  splitMarks(text, queryTerms(query))
    .filter((p) => p.mark)
    .map((p) => p.text);

describe('queryTerms', () => {
  it('takes words, phrases and field values, not operators, negated terms, regexes or comparisons', () => {
    expect(
      queryTerms(
        'payment -declined host:"web 1" NOT foo "Exact Phrase" AND (a OR bb) msg:/re+/ status>=500 -app:x',
      ),
    ).toEqual(['exact phrase', 'payment', 'web 1', 'bb', 'a']);
  });

  it('leaves out a negated group and everything after the first pipe', () => {
    expect(queryTerms('keep -(drop OR gone) also | stats count() by host')).toEqual(['keep', 'also']);
  });

  it('takes the literal part of a wildcard word, unescapes quoted values', () => {
    expect(queryTerms('time* "say \\"hi\\""')).toEqual(['say "hi"', 'time']);
  });

  it('gives nothing for an empty query or only operators', () => {
    expect(queryTerms('')).toEqual([]);
    expect(queryTerms('NOT -x AND')).toEqual([]);
  });
});

describe('splitMarks', () => {
  it('marks every occurrence, case-insensitively, and keeps the text whole', () => {
    const text = 'Payment TIMEOUT for payment 42';
    const pieces = splitMarks(text, queryTerms('payment timeout'));
    expect(pieces.map((p) => p.text).join('')).toBe(text);
    expect(pieces.filter((p) => p.mark).map((p) => p.text)).toEqual(['Payment', 'TIMEOUT', 'payment']);
  });

  it('prefers the longer of overlapping terms and does not mark a negated one', () => {
    expect(marked('order declined: payment declined', 'payment "payment declined" -declined')).toEqual([
      'payment declined',
    ]);
  });

  it('marks a text that is the term itself', () => {
    expect(splitMarks('PanelTest', ['paneltest'])).toEqual([{ text: 'PanelTest', mark: true }]);
  });

  it('returns the text as it is without terms or matches', () => {
    expect(splitMarks('abc', [])).toEqual([{ text: 'abc', mark: false }]);
    expect(splitMarks('abc', ['zz'])).toEqual([{ text: 'abc', mark: false }]);
  });

  it('searches only the first MARK_CHARS of a 64 KB message, quickly, and keeps it whole', () => {
    const text = 'error '.repeat(11_000);
    const start = performance.now();
    const pieces = splitMarks(text, queryTerms('error'));
    expect(performance.now() - start).toBeLessThan(200);
    expect(pieces.map((p) => p.text).join('')).toBe(text);
    const last = pieces.filter((p) => p.mark).length;
    expect(last).toBeGreaterThan(0);
    expect(last).toBeLessThanOrEqual(Math.ceil(MARK_CHARS / 6));
  });
});
