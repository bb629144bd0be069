import { describe, expect, it } from 'vitest';
import {
  MAX_WIDTH,
  MIN_WIDTH,
  moveColumn,
  parseWidths,
  placeColumn,
  toggleColumn,
  widthsParam,
} from '../../../ui/src/pages/search/columns.js';
import { EMPTY_VIEW, viewFromParams, viewPath } from '../../../ui/src/pages/search/search-url.js';

const PLAIN = ['time', 'severity', 'host', 'app', 'message'];

/** The results table's columns: which, in what order, how wide (ui/src/pages/search/columns.ts). */
describe('the results table columns', () => {
  it('shows a column before the message, which stays last; the time first', () => {
    expect(toggleColumn(PLAIN, 'status', true)).toEqual([
      'time',
      'severity',
      'host',
      'app',
      'status',
      'message',
    ]);
    expect(toggleColumn(['host', 'message'], 'time', true)).toEqual(['time', 'host', 'message']);
    expect(toggleColumn(['time', 'host'], 'message', true)).toEqual(['time', 'host', 'message']);
    expect(toggleColumn(['time', 'host'], 'status', true)).toEqual(['time', 'host', 'status']);
    expect(toggleColumn(PLAIN, 'host', true)).toEqual(PLAIN);
    expect(toggleColumn(PLAIN, 'host', false)).toEqual(['time', 'severity', 'app', 'message']);
    expect(toggleColumn(['host'], 'host', false)).toEqual(['host']);
  });

  it('moves a column by a place, or to an index, within the ends', () => {
    expect(moveColumn(PLAIN, 'app', -1)).toEqual(['time', 'severity', 'app', 'host', 'message']);
    expect(moveColumn(PLAIN, 'app', 1)).toEqual(['time', 'severity', 'host', 'message', 'app']);
    expect(moveColumn(PLAIN, 'time', -1)).toEqual(PLAIN);
    expect(moveColumn(PLAIN, 'message', 1)).toEqual(PLAIN);
    expect(moveColumn(PLAIN, 'status', 1)).toEqual(PLAIN);
    expect(placeColumn(PLAIN, 'app', 0)).toEqual(['app', 'time', 'severity', 'host', 'message']);
    expect(placeColumn(PLAIN, 'time', 4)).toEqual(['severity', 'host', 'app', 'message', 'time']);
    expect(placeColumn(PLAIN, 'time', 99)).toEqual(['severity', 'host', 'app', 'message', 'time']);
  });

  it('reads widths as the address writes them, within the bounds, dropping what is malformed', () => {
    expect(parseWidths('host:180,app:96')).toEqual({ host: 180, app: 96 });
    expect(widthsParam({ host: 180, 'http.duration_ms': 120 })).toBe('host:180,http.duration_ms:120');
    expect(parseWidths(`host:1,app:${MAX_WIDTH * 10}`)).toEqual({ host: MIN_WIDTH, app: MAX_WIDTH });
    expect(parseWidths('host:x,:90,app:,<b>:90,msg:-5,ok:120')).toEqual({ ok: 120 });
    expect(parseWidths('')).toBeNull();
    expect(parseWidths('host')).toBeNull();
  });

  it('keeps the widths in the address beside the columns; an address without them is as before', () => {
    const v = { ...EMPTY_VIEW, columns: ['time', 'host', 'message'], widths: { host: 180 } };
    const path = viewPath(v);
    expect(path).toBe('/search?cols=time%2Chost%2Cmessage&widths=host%3A180');
    expect(viewFromParams(new URLSearchParams(path.slice('/search?'.length)))).toEqual(v);
    const old = viewFromParams(new URLSearchParams('cols=time,host,message'));
    expect(old.columns).toEqual(['time', 'host', 'message']);
    expect(old.widths).toBeUndefined();
    expect(viewPath(old)).toBe('/search?cols=time%2Chost%2Cmessage');
  });
});
