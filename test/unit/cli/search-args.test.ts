import { describe, expect, it } from 'vitest';
import { formatEvent, localIso } from '../../../src/cli/format.js';
import { parseDuration, timeRange } from '../../../src/cli/search.js';

describe('search arguments', () => {
  const now = Date.UTC(2026, 10, 20, 12, 0, 0, 500);

  it('reads durations in s, m, h, d, w and refuses anything else naming the flag', () => {
    expect(parseDuration('--since', '90s')).toBe(90);
    expect(parseDuration('--since', '15m')).toBe(900);
    expect(parseDuration('--since', '1h')).toBe(3600);
    expect(parseDuration('--since', '7d')).toBe(604_800);
    expect(parseDuration('--since', '2w')).toBe(1_209_600);
    for (const bad of ['', '1', 'h', '0m', '-1h', '1.5h', '1y', '1h30m'])
      expect(() => parseDuration('--since', bad)).toThrow(/^--since takes a duration like 15m, 1h or 7d/);
  });

  it('sends --since as the server preset, so "the last hour" is the server clock', () => {
    expect(timeRange({}, now)).toEqual({ preset: 'last_1_hours' });
    expect(timeRange({ since: '15m' }, now)).toEqual({ preset: 'last_15_minutes' });
    expect(timeRange({ since: '120m' }, now)).toEqual({ preset: 'last_2_hours' });
    expect(timeRange({ since: '2w' }, now)).toEqual({ preset: 'last_14_days' });
    expect(timeRange({ since: '120s' }, now)).toEqual({ preset: 'last_2_minutes' });
    // Not a whole minute: from this clock, up to and including the current second.
    const s = Math.floor(now / 1000);
    expect(timeRange({ since: '30s' }, now)).toEqual({ ts_from: s + 1 - 30, ts_to: s + 1 });
  });

  it('turns --from/--to into Unix seconds, [from, to)', () => {
    const from = '2026-11-20T08:00:00Z';
    const to = '2026-11-20T10:00:00.250Z';
    const f = Date.UTC(2026, 10, 20, 8) / 1000;
    expect(timeRange({ from, to }, now)).toEqual({ ts_from: f, ts_to: f + 7201 });
    expect(timeRange({ from }, now)).toEqual({ ts_from: f, ts_to: Math.ceil(now / 1000) + 1 });
    expect(timeRange({ to: '2026-11-20T10:00:00Z', since: '2h' }, now)).toEqual({
      ts_from: f,
      ts_to: f + 7200,
    });
    expect(() => timeRange({ from, since: '1h', sinceGiven: true }, now)).toThrow(/exclude each other/);
    expect(() => timeRange({ from: 'yesterday' }, now)).toThrow(/^--from takes an ISO 8601 time/);
    expect(() => timeRange({ from: to, to: from }, now)).toThrow(/--from must be before --to/);
  });
});

describe('event lines', () => {
  const ts = Date.UTC(2026, 10, 20, 12, 0, 0, 123) / 1000;
  const base = { ev_id: '01J', ts, severity: 'error', host: 'db-1', app: 'postgres', message: 'disk full' };

  it('local ISO time with offset', () => {
    const d = new Date(ts * 1000);
    const line = localIso(ts);
    expect(Date.parse(line)).toBe(d.getTime());
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.123[+-]\d\d:\d\d$/);
  });

  it('time, severity, host, app, message on one line; - for what is missing; controls escaped', () => {
    expect(formatEvent(base, false)).toBe(`${localIso(ts)} error   db-1 postgres disk full`);
    expect(formatEvent({ ev_id: '01J', ts, message: 'a\nb\x1b[31m' }, false)).toBe(
      `${localIso(ts)} -       - - a\\nb\\u001b[31m`,
    );
    // No message: the extra fields instead.
    expect(formatEvent({ ev_id: '01J', ts, host: 'h', message: null, 'http.path': '/x', n: 3 }, false)).toBe(
      `${localIso(ts)} -       h - http.path=/x n=3`,
    );
  });

  it('colours only when asked', () => {
    expect(formatEvent(base, true)).toContain('\x1b[31merror  \x1b[0m');
    expect(formatEvent(base, false)).not.toContain('\x1b[');
  });
});
