import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

type Ev = { ev_id: string; message: string; host: string | null; app: string | null };
type Context = {
  anchor: Ev;
  by: Record<string, unknown>;
  before?: Ev[];
  after?: Ev[];
  before_cursor?: string | null;
  after_cursor?: string | null;
};

/** GET /api/events/{id}/context (docs/api/events.md): the same source around an event, in order. */
describe(`event context (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const ids = new Map<string, string>();
  const T = Math.floor(Date.now() / 1000) - 600;
  const get = (url: string, token = t.adminToken) => t.as(token, { method: 'GET', url });
  const context = async (msg: string, qs = '', token = t.adminToken): Promise<Context> => {
    const res = await get(`/api/events/${ids.get(msg)}/context${qs}`, token);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const messages = (es: Ev[] | undefined) => (es ?? []).map((e) => e.message);

  beforeAll(async () => {
    t = await createTestApp();
    // web-1/nginx lines 0..9, one a second, with web-2 lines between them; lines 4a, 4b, 4c
    // share a second (stored in that order); a cron line on web-1 too.
    const lines: object[] = [];
    for (let i = 0; i < 10; i++) {
      const names = i === 4 ? ['4a', '4b', '4c'] : [String(i)];
      for (const n of names)
        lines.push({ host: 'web-1', app: 'nginx', message: `line ${n}`, timestamp: T + i });
      lines.push({ host: 'web-2', app: 'nginx', message: `other ${i}`, timestamp: T + i });
    }
    lines.push({ host: 'web-1', app: 'cron', message: 'cron job', timestamp: T + 5 });
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: lines.length });
    const all = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: { preset: 'last_hour' }, page_size: 100 } },
    });
    for (const e of all.json().results.events as Ev[]) ids.set(e.message, e.ev_id);
  });
  afterAll(() => t.close());

  it('shows the same host and app around the anchor, oldest first, ties in the order stored', async () => {
    const c = await context('line 4b', '?before=3&after=3');
    expect(c.anchor.message).toBe('line 4b');
    expect(c.by).toEqual({ host: 'web-1', app: 'nginx' });
    expect(messages(c.before)).toEqual(['line 2', 'line 3', 'line 4a']);
    expect(messages(c.after)).toEqual(['line 4c', 'line 5', 'line 6']);
    expect(c.before_cursor).toEqual(expect.any(String));
    // The same on every call.
    expect(await context('line 4b', '?before=3&after=3')).toEqual(c);
  });

  it('continues one side with its cursor until it ends (null)', async () => {
    const first = await context('line 6', '?before=2&after=0');
    expect(messages(first.before)).toEqual(['line 4c', 'line 5']);
    expect(first.after).toEqual([]);
    expect(first.after_cursor).toBeNull();
    const older = await context('line 6', `?before=3&cursor=${first.before_cursor}`);
    expect(messages(older.before)).toEqual(['line 3', 'line 4a', 'line 4b']);
    expect(older.after).toBeUndefined();
    const rest = await context('line 6', `?before=10&cursor=${older.before_cursor}`);
    expect(messages(rest.before)).toEqual(['line 0', 'line 1', 'line 2']);
    expect(rest.before_cursor).toBeNull();
    // A page that takes the side's last events ends it: no cursor to an empty page.
    const last = await context('line 2', '?before=2&after=0');
    expect(messages(last.before)).toEqual(['line 0', 'line 1']);
    expect(last.before_cursor).toBeNull();
    expect((await context('line 2', '?before=1&after=0')).before_cursor).toEqual(expect.any(String));
  });

  it('by= chooses the source fields; empty means every event', async () => {
    const host = await context('line 5', '?before=2&after=1&by=host');
    expect(host.by).toEqual({ host: 'web-1' });
    expect(messages(host.before)).toEqual(['line 4b', 'line 4c']);
    // The cron line has the same second, stored after: it comes next.
    expect(messages(host.after)).toEqual(['cron job']);
    // A field the anchor lacks is allowed: it matches the events that lack it too (here, all).
    const unknown = await context('line 0', '?before=0&after=2&by=no_such_field');
    expect(unknown.by).toEqual({ no_such_field: null });
    expect(messages(unknown.after)).toEqual(['other 0', 'line 1']);
    const all = await context('line 0', '?before=0&after=2&by=');
    expect(all.by).toEqual({});
    expect(messages(all.after)).toEqual(['other 0', 'line 1']);
    // A name that reads as a number is a field name like any other.
    const numeric = await context('line 0', '?before=0&after=2&by=0x10');
    expect(numeric.by).toEqual({ '0x10': null });
    expect(messages(numeric.after)).toEqual(['other 0', 'line 1']);
  });

  it('takes before and after as the integers their schema reads, and refuses the rest naming them', async () => {
    // The query string's integers are read as the schema's validator coerces them.
    expect(await context('line 5', '?before=0x2&after=1e0')).toEqual(
      await context('line 5', '?before=2&after=1'),
    );
    for (const [qs, field] of [
      ['?before=0x3e9', 'before'],
      ['?after=0x', 'after'],
      ['?before=1.5', 'before'],
      ['?after=ten', 'after'],
    ] as const) {
      const res = await get(`/api/events/${ids.get('line 5')}/context${qs}`);
      expect(res.statusCode, qs).toBe(400);
      expect(res.json(), qs).toMatchObject({ code: 'invalid', errors: { [field]: [expect.any(String)] } });
    }
  });

  it('finds the nearest lines whatever their distance (a source that logs rarely)', async () => {
    const DAY = 86_400;
    const lines = [400, 40, 2, 0.01].map((d, i) => ({
      host: 'rare',
      app: 'cron',
      message: `rare ${i}`,
      timestamp: T - d * DAY,
    }));
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: 4 });
    const q = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { time_range: { preset: 'last_hour' }, query: 'host:rare' } },
    });
    const anchor = (q.json().results.events as Ev[])[0] as Ev;
    expect(anchor.message).toBe('rare 3');
    const c = (await get(`/api/events/${anchor.ev_id}/context?before=10&after=10`)).json() as Context;
    expect(messages(c.before)).toEqual(['rare 0', 'rare 1', 'rare 2']);
    expect(c.after).toEqual([]);
    expect(c.before_cursor).toBeNull();
  });

  it('shows only what the caller may read; an unreadable anchor is 404; bad input 400', async () => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Web 2', rule: 'host:web-2', readers: { users: [] } },
    });
    expect(res.statusCode, res.body).toBe(201);
    const eve = await t.user('eve');
    // Eve reads Default (everything but web-2): all-events context skips web-2's lines.
    const c = await context('line 0', '?before=0&after=3&by=', eve.token);
    expect(messages(c.after)).toEqual(['line 1', 'line 2', 'line 3']);
    expect((await get(`/api/events/${ids.get('other 3')}/context`, eve.token)).statusCode).toBe(404);
    for (const qs of ['?before=1001', '?after=-1', '?cursor=nope', '?by=a%20b'])
      expect((await get(`/api/events/${ids.get('line 1')}/context${qs}`)).statusCode, qs).toBe(400);
  });
});
