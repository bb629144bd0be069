import { describe, expect, it } from 'vitest';
import {
  baselineBody,
  durationText,
  filterWindow,
  parseBaseline,
  parseSpan,
  ratioText,
} from '../../../ui/src/pages/search/explain.js';
import { viewFromParams, viewPath } from '../../../ui/src/pages/search/search-url.js';

const view = (qs: string) => viewFromParams(new URLSearchParams(qs));

/** The search page's Explain panel in its address, and how its figures are written. */
describe('the Explain panel in the address', () => {
  it('holds the focus and the baseline, a preset or a window', () => {
    expect(view('explain=1795750000-1795751800&baseline=same_time_last_week')).toMatchObject({
      explain: { from: 1_795_750_000, to: 1_795_751_800 },
      baseline: 'same_time_last_week',
    });
    const custom = view('q=app%3Ashop&explain=100-200&baseline=10-50');
    expect(custom.baseline).toEqual({ from: 10, to: 50 });
    expect(viewPath(custom)).toBe('/search?q=app%3Ashop&explain=100-200&baseline=10-50');
    // A link without a baseline explains against the previous period, and says so once written.
    expect(viewPath(view('explain=100-200'))).toBe('/search?explain=100-200&baseline=previous');
  });

  it('takes what is malformed as no panel (or the previous period), and leaves a closed one out', () => {
    for (const bad of ['200-100', '5-5', 'a-b', '100-', '-5-10', '1234567890123-1234567890124'])
      expect(view(`explain=${bad}`).explain, bad).toBeUndefined();
    expect(view('explain=1-2&baseline=last_week').baseline).toBe('previous');
    expect(view('explain=1-2&baseline=9-3').baseline).toBe('previous');
    expect(viewPath({ ...view('explain=1-2&baseline=3-4'), explain: null })).toBe('/search');
    expect(parseSpan(null)).toBeNull();
    expect(parseBaseline(null)).toBe('previous');
  });

  it('sends the baseline in the API’s forms', () => {
    expect(baselineBody('previous')).toEqual({ preset: 'previous' });
    expect(baselineBody({ from: 10, to: 50 })).toEqual({ ts_from: 10, ts_to: 50 });
  });

  it('writes ratios and lengths of time', () => {
    expect(ratioText(10.182)).toBe('×10.2');
    expect(ratioText(0.25)).toBe('×0.3');
    expect(ratioText(0.04)).toBe('×0.04');
    expect(ratioText(1520)).toBe('×1,520');
    expect(ratioText(null)).toBe('');
    expect(durationText(45)).toBe('45 s');
    expect(durationText(600)).toBe('10 min');
    expect(durationText(5400)).toBe('1 h 30 min');
    expect(durationText(2 * 86_400)).toBe('2 d');
  });

  it('searches a gone change over the baseline, others over the range shown', () => {
    const results = {
      focus: { ts_from: 200, ts_to: 300 },
      baseline: { ts_from: 100.5, ts_to: 200 },
      focus_total: 1,
      baseline_total: 1,
      fields: [],
      tested: 1,
      min_score: 20,
      changes: [],
    };
    const change = (direction: 'gone' | 'up') => ({
      kind: 'pattern' as const,
      term: 'pattern_id:x',
      focus_count: 0,
      baseline_count: 30,
      focus_rate: 0,
      baseline_rate: 18,
      ratio: 0,
      direction,
      score: 41,
    });
    expect(filterWindow(change('gone'), results)).toEqual({ from: 100, to: 200 });
    expect(filterWindow(change('up'), results)).toBeNull();
  });
});
