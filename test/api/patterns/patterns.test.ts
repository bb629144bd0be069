import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { openRuntime } from '../../../src/runtime.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

type Ev = { ev_id: string; message: string; app: string | null; pattern_id: string | null };

/**
 * Patterns at ingest (docs/api/patterns.md): every stored event carries its template's id, a template
 * that generalises keeps it, `pattern_id` is a field like any other, `GET
 * /api/patterns/{id}` shows a template to who may read one of its events, and a restart
 * keeps the ids.
 */
describe(`patterns at ingest (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const T = Math.floor(Date.now() / 1000) - 600;
  const send = async (app: TestApp['app'], lines: object[]) => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: lines.length });
  };
  const search = async (query: string, token = t.adminToken, app = t.app): Promise<Ev[]> => {
    const res = await app.inject({
      method: 'POST',
      url: '/api/query',
      headers: { authorization: `token ${token}` },
      payload: { type: 'Search', params: { query, time_range: { preset: 'last_hour' }, page_size: 100 } },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json().results.events;
  };

  beforeAll(async () => {
    t = await createTestApp();
    await send(t.app, [
      { app: 'sshd', host: 'h1', message: 'Invalid user webmaster from 173.234.31.186', timestamp: T },
      { app: 'sshd', host: 'h1', message: 'Invalid user test9 from 52.80.34.196', timestamp: T + 1 },
      { app: 'sshd', host: 'h1', message: 'Connection closed by 10.0.0.1 [preauth]', timestamp: T + 2 },
      { app: 'sshd', host: 'h1', message: 'Invalid user admin from 5.188.10.180', timestamp: T + 3 },
      { app: 'payments', host: 'p1', message: 'charge 42 accepted for order 7', timestamp: T + 4 },
      { app: 'payments', host: 'p1', message: 'charge 43 accepted for order 8', timestamp: T + 5 },
      { app: 'cron', host: 'h1', timestamp: T + 6 },
    ]);
  });
  afterAll(() => t.close());

  it('gives every stored event a pattern_id; one template, one id', async () => {
    const all = await search('');
    expect(all).toHaveLength(7);
    for (const e of all) expect(e.pattern_id, e.message).toMatch(/^[A-Za-z0-9]{12,16}$/);
    const invalid = all.filter((e) => e.message?.startsWith('Invalid user'));
    expect(new Set(invalid.map((e) => e.pattern_id)).size).toBe(1);
    const charges = all.filter((e) => e.app === 'payments');
    expect(new Set(charges.map((e) => e.pattern_id)).size).toBe(1);
    expect(charges[0]?.pattern_id).not.toBe(invalid[0]?.pattern_id);
  });

  it('finds a pattern’s events by pattern_id in the query language, and TopN counts them', async () => {
    const id = (await search('"Invalid user"'))[0]?.pattern_id as string;
    const found = await search(`pattern_id:${id}`);
    expect(found.map((e) => e.message).sort()).toEqual([
      'Invalid user admin from 5.188.10.180',
      'Invalid user test9 from 52.80.34.196',
      'Invalid user webmaster from 173.234.31.186',
    ]);
    const top = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'TopN', params: { field: 'pattern_id', n: 10, time_range: { preset: 'last_hour' } } },
    });
    const rows = top.json().results.rows ?? top.json().results.values ?? top.json().results;
    expect(JSON.stringify(rows)).toContain(id);
  });

  it('shows a pattern: its template, span, count and an example the caller may read', async () => {
    const id = (await search('"Invalid user"'))[0]?.pattern_id as string;
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
    expect(res.statusCode, res.body).toBe(200);
    const p = res.json();
    expect(p).toMatchObject({ pattern_id: id, template: 'Invalid user <*> from <*>', count: 3 });
    expect(p.first_seen).toBe(T);
    expect(p.last_seen).toBe(T + 3);
    expect((await search('')).map((e) => e.ev_id)).toContain(p.example_ev_id);
    expect(
      (await t.as(t.adminToken, { method: 'GET', url: '/api/patterns/nosuchpattern1' })).statusCode,
    ).toBe(404);
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/patterns/bad%20id' })).statusCode).toBe(400);
  });

  it('shows a pattern only to who may read one of its events', async () => {
    const id = (await search('"Invalid user"'))[0]?.pattern_id as string;
    // A stream of the payments app, read by a team the user is in: sshd is not theirs.
    const u = await t.user('cashier');
    const team = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'cash', members: [u.id] },
    });
    const stream = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Payments', rule: 'app:payments', readers: { teams: [team.json().id] } },
    });
    expect(stream.statusCode, stream.body).toBe(201);
    const everyoneDefault = await t.as(t.adminToken, { method: 'GET', url: '/api/streams' });
    const def = everyoneDefault
      .json()
      .results.find((s: { builtin?: boolean; title: string }) => s.title === 'Default');
    const patched = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${def.id}`,
      payload: { readers: { teams: [], users: [] } },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await search('', u.token)).map((e) => e.app).sort()).toEqual(['payments', 'payments']);
    const seen = await t.as(u.token, { method: 'GET', url: `/api/patterns/${id}` });
    expect(seen.statusCode, seen.body).toBe(404);
    const charge = (await search('app:payments'))[0]?.pattern_id as string;
    expect((await t.as(u.token, { method: 'GET', url: `/api/patterns/${charge}` })).statusCode).toBe(200);
  });

  const patternsQuery = async (params: object) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Patterns', params: { time_range: { preset: 'last_hour' }, ...params } },
    });
    return res;
  };

  it('answers the Patterns query: templates by count, share, span, series, samples, other', async () => {
    const res = await patternsQuery({});
    expect(res.statusCode, res.body).toBe(200);
    const r = res.json().results;
    expect(r.total).toBe(7);
    const first = r.patterns[0];
    expect(first).toMatchObject({
      template: 'Invalid user <*> from <*>',
      count: 3,
      // First seen inside the range (no event of it before).
      new: true,
      previous_count: null,
    });
    expect(first.share).toBeCloseTo(3 / 7);
    expect(first.first_seen).toBe(T);
    expect(first.last_seen).toBe(T + 3);
    expect(first.series).toHaveLength(20);
    expect(first.series.reduce((a: number, b: number) => a + b, 0)).toBe(3);
    expect(first.samples.map((x: { message: string }) => x.message)).toEqual([
      'Invalid user admin from 5.188.10.180',
      'Invalid user test9 from 52.80.34.196',
      'Invalid user webmaster from 173.234.31.186',
    ]);
    expect(r.patterns.reduce((a: number, p: { count: number }) => a + p.count, 0) + r.other).toBe(7);
    const one = (await patternsQuery({ n: 1 })).json().results;
    expect(one.patterns).toHaveLength(1);
    expect(one.other).toBe(4);
  });

  it('counts each pattern as a Search for its pattern_id does', async () => {
    const r = (await patternsQuery({ n: 1000 })).json().results;
    for (const p of r.patterns as Array<{ pattern_id: string; count: number }>) {
      const res = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/query',
        payload: {
          type: 'Search',
          params: { query: `pattern_id:${p.pattern_id}`, time_range: { preset: 'last_hour' }, page_size: 1 },
        },
      });
      expect(res.json().results.total, p.pattern_id).toBe(p.count);
    }
  });

  it('says which patterns are new against an earlier range, with their count there', async () => {
    const earlier = { ts_from: T - 7200, ts_to: T - 3600 };
    const r = (await patternsQuery({ compare_to: earlier })).json().results;
    for (const p of r.patterns) expect(p).toMatchObject({ new: true, previous_count: 0 });
    const same = (await patternsQuery({ compare_to: { ts_from: T - 3600, ts_to: T + 60 } })).json().results;
    for (const p of same.patterns) {
      expect(p.new).toBe(false);
      expect(p.previous_count).toBe(p.count);
    }
  });

  it('reads a compare_to preset as the range of that length just before the query’s', async () => {
    // The hour before the last hour holds none of the events: all new. Were the preset to
    // end where the query's range ends, it would hold them all and none would be new.
    const before = (await patternsQuery({ compare_to: { preset: 'last_hour' } })).json().results;
    expect(before.patterns.length).toBeGreaterThan(0);
    for (const p of before.patterns) expect(p).toMatchObject({ new: true, previous_count: 0 });
  });

  it('exports the Patterns list with its templates, and makes a dashboard widget of it', async () => {
    const q = (await patternsQuery({})).json();
    const csv = await t.as(t.adminToken, { method: 'GET', url: `/api/query/${q.query_id}/export?ftype=csv` });
    expect(csv.statusCode, csv.body).toBe(200);
    expect(csv.body.split('\n')[0]).toContain('template');
    expect(csv.body).toContain('Invalid user <*> from <*>');
    const board = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/dashboards',
      payload: { title: 'Kinds' },
    });
    expect(board.statusCode, board.body).toBe(201);
    const widget = await t.as(t.adminToken, {
      method: 'POST',
      url: `/api/dashboards/${board.json().id}/widgets`,
      payload: {
        title: 'Message kinds',
        query: { type: 'Patterns', params: { time_range: { preset: 'last_hour' }, n: 10 } },
        visualization: { kind: 'table', options: {} },
      },
    });
    expect(widget.statusCode, widget.body).toBeLessThan(300);
    expect(widget.json().query.type).toBe('Patterns');
  });

  it('refuses a bad n or compare_to with a 400 naming the field', async () => {
    for (const [params, field] of [
      [{ n: 0 }, 'params.n'],
      [{ n: 1001 }, 'params.n'],
      [{ compare_to: { preset: 'last_forever' } }, 'params.compare_to'],
      [{ compare_to: 'yesterday' }, 'params.compare_to'],
    ] as const) {
      const res = await patternsQuery(params);
      expect(res.statusCode, JSON.stringify(params)).toBe(400);
      expect(Object.keys(res.json().errors ?? {}).join(), res.body).toContain(field);
    }
  });

  it('deletes the templates none of whose events is left, once retention took them', async () => {
    const now = Date.now();
    const old = Math.floor(now / 1000) - 30 * 86_400;
    await send(t.app, [
      { app: 'legacy', host: 'h9', message: 'legacy job finished cleanly', timestamp: old },
    ]);
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { query: 'app:legacy', time_range: { ts_from: old - 60, ts_to: old + 60 } },
      },
    });
    const legacy = (res.json().results.events as Ev[])[0]?.pattern_id as string;
    const kept = (await search('"Invalid user"'))[0]?.pattern_id as string;
    const shown = (id: string) => t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
    const patterns = t.rt.services.patterns;
    // While the legacy event is stored, nothing goes.
    expect(await patterns.prune()).toBe(0);
    expect((await shown(legacy)).statusCode).toBe(200);
    // Retention takes it (older than 20 days): its template's row goes, the others stay.
    expect(await t.rt.events.deleteOlderThan(now - 20 * 86_400_000)).toBe(1);
    expect(await patterns.prune()).toBe(1);
    expect(await patterns.prune()).toBe(0);
    expect((await shown(kept)).json()).toMatchObject({ pattern_id: kept, count: 3 });
    expect((await shown(legacy)).statusCode).toBe(404);
  });

  it('keeps the ids across a restart: a new line of a known template gets its id', async () => {
    const id = (await search('"Invalid user"'))[0]?.pattern_id as string;
    await t.app.close();
    await t.rt.close();
    const rt = await openRuntime(t.rt.platform.config, t.pgSchema ? { pgSchema: t.pgSchema } : {});
    const app = await buildApp({ root: rt.root, checks: [] });
    try {
      await send(app, [
        { app: 'sshd', host: 'h2', message: 'Invalid user carol from 9.9.9.9', timestamp: T + 7 },
      ]);
      const again = await search('carol', t.adminToken, app);
      expect(again[0]?.pattern_id).toBe(id);
    } finally {
      await app.close();
      await rt.close();
    }
  });
});

/**
 * A pattern's count and span are over the events its caller may read (issue #54): events
 * of the same template in a stream they may not read neither count nor widen its span.
 */
describe(`a pattern counted over readable events (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const T = Math.floor(Date.now() / 1000) - 900;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('gives a reader of some of its events their count, first and last seen; an admin all', async () => {
    const reader = await t.user('reader');
    const team = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/teams',
      payload: { name: 'vault-keepers', members: [] },
    });
    const vault = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/streams',
      payload: { title: 'Vault', rule: 'host:vault', readers: { teams: [team.json().id] } },
    });
    expect(vault.statusCode, vault.body).toBe(201);
    const line = (n: number, host: string, at: number) => ({
      app: 'billing',
      host,
      message: `invoice ${n} sent to customer ${n * 7}`,
      timestamp: at,
    });
    const sent = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      payload: [
        line(1, 'vault', T),
        line(2, 'web', T + 10),
        line(3, 'web', T + 20),
        line(4, 'vault', T + 30),
      ],
    });
    expect(sent.statusCode, sent.body).toBe(200);
    const found = await t.as(reader.token, {
      method: 'POST',
      url: '/api/query',
      payload: { type: 'Search', params: { query: 'app:billing', time_range: { preset: 'last_hour' } } },
    });
    const events = found.json().results.events as Ev[];
    expect(events.map((e) => e.message).sort()).toEqual([
      'invoice 2 sent to customer 14',
      'invoice 3 sent to customer 21',
    ]);
    const id = events[0]?.pattern_id as string;
    const seen = await t.as(reader.token, { method: 'GET', url: `/api/patterns/${id}` });
    expect(seen.statusCode, seen.body).toBe(200);
    expect(seen.json()).toMatchObject({ pattern_id: id, count: 2, first_seen: T + 10, last_seen: T + 20 });
    expect(events.map((e) => e.ev_id)).toContain(seen.json().example_ev_id);
    const all = await t.as(t.adminToken, { method: 'GET', url: `/api/patterns/${id}` });
    expect(all.json()).toMatchObject({ pattern_id: id, count: 4, first_seen: T, last_seen: T + 30 });
  });
});
