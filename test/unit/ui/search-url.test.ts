import { describe, expect, it } from 'vitest';
import {
  EMPTY_VIEW,
  nextSort,
  shareLink,
  sortOf,
  viewFromParams,
  viewPath,
  withShownColumns,
} from '../../../ui/src/pages/search/search-url.js';

const view = (qs: string) => viewFromParams(new URLSearchParams(qs));

/** The search page's state in its address (docs/web-ui.md). */
describe('the search page address', () => {
  it('is /search for the default view, and holds every part of another', () => {
    expect(viewPath(EMPTY_VIEW)).toBe('/search');
    const v = {
      query: 'app:nginx AND status:>=500',
      range: { kind: 'absolute' as const, from: 1_700_000_000, to: 1_700_003_600 },
      columns: ['time', 'host', 'status'],
      sort: ['host', '-ts'],
      tab: 'patterns' as const,
      event: '01JC0ABCDEF',
      context: true,
      saved: 7,
    };
    const path = viewPath(v);
    expect(view(path.slice('/search?'.length))).toEqual(v);
  });

  it('takes what is malformed as the default, and drops a context without an event', () => {
    expect(view('sort=&cols=&saved=x&ev=a%20b&context=1&tab=x&from=5&to=2')).toEqual(EMPTY_VIEW);
    expect(view('context=1').context).toBe(false);
    expect(view('tab=patterns').tab).toBe('patterns');
    expect(view('cols=time,%3Cscript%3E,host').columns).toEqual(['time', 'host']);
    expect(view('range=last_24_hours').range).toEqual({ kind: 'preset', preset: 'last_24_hours' });
  });

  it("shows a link's columns as they are, else the reader's own, and leaves the default ones out", () => {
    const plain = ['time', 'severity', 'host', 'app', 'message'];
    const own = ['time', 'host', 'status'];
    const linked = withShownColumns(view('cols=time,app'), own, plain);
    expect(linked.columns).toEqual(['time', 'app']);
    expect(viewPath(linked.view)).toBe('/search?cols=time%2Capp');
    const theirs = withShownColumns(view('q=x'), own, plain);
    expect(theirs.columns).toEqual(own);
    expect(viewPath(theirs.view)).toBe('/search?q=x&cols=time%2Chost%2Cstatus');
    const byDefault = withShownColumns(view('q=x&cols=time,severity,host,app,message'), own, plain);
    expect(byDefault.columns).toEqual(['time', 'severity', 'host', 'app', 'message']);
    expect(viewPath(byDefault.view)).toBe('/search?q=x&cols=time%2Cseverity%2Chost%2Capp%2Cmessage');
    expect(
      viewPath(withShownColumns(view('q=x&cols=time,severity,host,app,message'), plain, plain).view),
    ).toBe('/search?q=x');
    expect(viewPath(withShownColumns(view('q=x'), plain, plain).view)).toBe('/search?q=x');
  });

  it('freezes a relative range to the window it covers now, to the second, when asked', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0, 500);
    const v = { ...EMPTY_VIEW, query: 'x', range: { kind: 'preset' as const, preset: 'last_24_hours' } };
    const relative = new URL(shareLink(v, 'https://logs.example.com', false, now));
    expect(relative.searchParams.get('range')).toBe('last_24_hours');
    const frozen = new URL(shareLink(v, 'https://logs.example.com', true, now));
    expect(frozen.searchParams.get('range')).toBeNull();
    const from = Number(frozen.searchParams.get('from'));
    const to = Number(frozen.searchParams.get('to'));
    expect(to - from).toBeGreaterThanOrEqual(86_400);
    expect(to - from).toBeLessThanOrEqual(86_401);
    expect(Math.abs(to - now / 1000)).toBeLessThanOrEqual(1);
  });

  it('sorts by a column on a click, and the other way on the next', () => {
    expect(nextSort(['-ts'], 'time')).toEqual(['ts']);
    expect(nextSort(['ts'], 'time')).toEqual(['-ts']);
    expect(nextSort(['-ts'], 'host')).toEqual(['host']);
    expect(nextSort(['host'], 'host')).toEqual(['-host']);
    expect(sortOf(['-ts'], 'time')).toBe('descending');
    expect(sortOf(['host'], 'host')).toBe('ascending');
    expect(sortOf(['host'], 'app')).toBeUndefined();
  });
});
