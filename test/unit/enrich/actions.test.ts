import { describe, expect, it } from 'vitest';
import { EVENT_COLUMNS } from '../../../src/core/event.js';
import { ACTION_IDS, ACTIONS, actionsForEvents, fieldKind } from '../../../src/enrich/actions.js';

describe('actions registry', () => {
  it('has one definition per action id', () => {
    expect(Object.keys(ACTIONS).sort()).toEqual([...ACTION_IDS].sort());
  });

  it('decides the kind of every column and of extra fields by their values', () => {
    const kinds = Object.fromEntries(EVENT_COLUMNS.map((c) => [c, fieldKind(c, ['x'])]));
    expect(kinds).toMatchObject({
      ev_id: 'id',
      ts: 'time',
      message: 'text',
      src_ip: 'ip',
      dst_ip: 'ip',
      status: 'integer',
      host: 'string',
    });
    expect(fieldKind('raw', [{}])).toBe('raw');
    expect(fieldKind('peer', ['10.0.0.1', '2001:db8::1'])).toBe('ip');
    expect(fieldKind('peer', ['10.0.0.1', 'localhost'])).toBe('string');
    expect(fieldKind('toString', ['a'])).toBe('string');
    expect(fieldKind('constructor', ['10.0.0.1'])).toBe('ip');
  });

  it('lists every field with a value, in registry order, and none without', () => {
    const actions = actionsForEvents(
      [
        { ev_id: 'A', ts: 1, host: null, peer: '192.0.2.1', bytes: 5 },
        { ev_id: 'B', ts: 2, host: null, message: 'hello', bytes: null },
      ],
      { time_range: { preset: 'last_hour' }, filter: [['app', 'eq', 'x']], query: 'error' },
    );
    expect(Object.keys(actions).sort()).toEqual(['bytes', 'ev_id', 'message', 'peer', 'ts']);
    expect(actions.ts).toEqual([]);
    expect(actions.bytes?.map((a) => a.id)).toEqual(['filter_in', 'filter_out', 'top_values']);
    expect(actions.peer?.find((a) => a.id === 'geoip')).toEqual({
      id: 'geoip',
      title: 'GeoIP lookup',
      method: 'POST',
      path: '/api/query?add_geoip_data=true',
      body: {
        type: 'TopN',
        params: {
          time_range: { preset: 'last_hour' },
          query: 'error',
          field: 'peer',
          n: 1,
          filter: [['app', 'eq', 'x'], { field: 'peer', op: 'eq' }],
        },
      },
    });
    expect(actions.ev_id).toEqual([
      { id: 'open_event', title: 'Open event', method: 'GET', path: '/api/events/{ev_id}' },
      {
        id: 'create_task',
        title: 'Create task',
        method: 'POST',
        path: '/api/tasks',
        body: { title: 'Investigate event {ev_id}', ev_ids: ['{ev_id}'] },
      },
    ]);
  });
});
