import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { event, HOUR, T0 } from '../../helpers/seed.js';
import { cityDb } from '../../unit/enrich/mmdb-writer.js';

const US = { country_code: 'US', country: 'United States' };
const AU = { country_code: 'AU', country: 'Australia' };
const SRC = [
  '8.8.8.8',
  '8.8.8.8',
  '8.8.8.8',
  '8.8.8.8',
  '8.8.8.8',
  '1.1.1.1',
  '1.1.1.1',
  '1.1.1.1',
  '1.1.1.1',
];

/** 12 events: src_ip 8.8.8.8 ×5, 1.1.1.1 ×4, 10.0.0.1 ×3; an extra IP field; dst_ip and user never set. */
async function seed(t: TestApp) {
  const events = Array.from({ length: 12 }, (_, i) =>
    event({
      ts: T0 + i * 60_000,
      host: `web-${(i % 2) + 1}`,
      app: 'nginx',
      message: `request ${i}`,
      src_ip: SRC[i] ?? '10.0.0.1',
      status: i % 3 ? 200 : 404,
      fields: { 'client.ip': i % 2 ? '2001:4860:4860::8888' : '81.2.69.142', 'http.path': `/p/${i % 4}` },
    }),
  );
  await t.rt.events.append(events);
  return events;
}

type Json = Record<string, unknown>;
interface Hint {
  id: string;
  title: string;
  filter?: { field: string; op: string };
  method?: string;
  path?: string;
  body?: { type?: string; params?: Json & { filter?: Json[] } };
}
type Item = { value: unknown; geo?: Json };

/** The fields with a non-null value in at least one event. */
const presentFields = (events: Json[]) =>
  [...new Set(events.flatMap((e) => Object.keys(e).filter((k) => e[k] !== null)))].sort();

/** A hint's request with `{ev_id}` and the valueless condition filled in, as a client does. */
function fill(hint: Hint, value: unknown, evId = '') {
  const sub = (s: string) => s.replaceAll('{ev_id}', evId);
  const body = JSON.parse(sub(JSON.stringify(hint.body ?? {})), (_k, v) =>
    v && typeof v === 'object' && 'op' in v && !('value' in v) ? { ...v, value } : v,
  );
  return { method: hint.method as 'GET' | 'POST', url: sub(hint.path ?? ''), payload: body };
}

describe(`GeoIP and actions over HTTP on ${BACKEND}`, () => {
  let t: TestApp;
  let evIds: string[];
  beforeAll(async () => {
    t = await createTestApp();
    evIds = (await seed(t)).map((e) => e.ev_id);
  });
  afterAll(() => t.close());

  const post = (body: object, qs = '') =>
    t.as(t.adminToken, { method: 'POST', url: `/api/query${qs}`, payload: body });
  const get = (url: string) => t.as(t.adminToken, { method: 'GET', url });

  it('opens the bundled database without warnings', () => {
    expect(t.rt.warnings).toEqual([]);
  });

  it('adds geo to the IP items of a TopN, not to the others', async () => {
    const res = await post(
      { type: 'TopN', params: { time_range: HOUR, field: 'src_ip' } },
      '?add_geoip_data=true',
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.items).toEqual([
      { value: '8.8.8.8', count: 5, share: 5 / 12, geo: US },
      { value: '1.1.1.1', count: 4, share: 4 / 12, geo: AU },
      { value: '10.0.0.1', count: 3, share: 3 / 12 },
    ]);
    // An extra field holding addresses (IPv4 and IPv6).
    const extra = (
      await post({ type: 'TopN', params: { time_range: HOUR, field: 'client.ip' } }, '?add_geoip_data=yes')
    ).json();
    expect(extra.results.items.map((i: Item) => [i.value, i.geo])).toEqual([
      ['2001:4860:4860::8888', US],
      ['81.2.69.142', { country_code: 'GB', country: 'United Kingdom' }],
    ]);
    // Values that are not addresses get nothing.
    const hosts = (
      await post({ type: 'TopN', params: { time_range: HOUR, field: 'host' } }, '?add_geoip_data=true')
    ).json();
    expect(hosts.results.items.map((i: Item) => i.value).sort()).toEqual(['web-1', 'web-2']);
    for (const item of [
      ...hosts.results.items,
      ...(
        await post({ type: 'TopN', params: { time_range: HOUR, field: 'status' } }, '?add_geoip_data=true')
      ).json().results.items,
    ]) {
      expect(item).not.toHaveProperty('geo');
    }
  });

  it('adds geo to a LastN, and on GET only when asked', async () => {
    const created = await post({ type: 'LastN', params: { time_range: HOUR, field: 'src_ip' } });
    const q = created.json();
    // Without the flag: no geo anywhere.
    expect(q.results.items.map((i: Item) => i.value)).toEqual(['10.0.0.1', '1.1.1.1', '8.8.8.8']);
    for (const item of q.results.items) expect(item).not.toHaveProperty('geo');
    const withGeo = (await get(`/api/query/${q.query_id}?add_geoip_data=1`)).json();
    expect(withGeo.results.items.map((i: Item) => [i.value, i.geo])).toEqual([
      ['10.0.0.1', undefined],
      ['1.1.1.1', AU],
      ['8.8.8.8', US],
    ]);
    expect(withGeo.results.items[2]).toMatchObject({ count: 5, first_seen: T0 / 1000 });
    // The flag shapes the answer, not the stored query.
    const again = (await get(`/api/query/${q.query_id}`)).json();
    for (const item of again.results.items) expect(item).not.toHaveProperty('geo');
  });

  it('rejects a flag that is not a boolean', async () => {
    const body = { type: 'TopN', params: { time_range: HOUR, field: 'src_ip' } };
    const bad = await post(body, '?add_geoip_data=maybe');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBeTypeOf('string');
    const q = (await post(body)).json();
    expect((await get(`/api/query/${q.query_id}?add_geoip_data=maybe`)).statusCode).toBe(400);
    expect((await get(`/api/query/${q.query_id}?actions_hint=2`)).statusCode).toBe(400);
    expect((await get(`/api/events/${evIds[0]}?actions_hint=maybe`)).statusCode).toBe(400);
  });

  it('lists the actions of exactly the fields present in a Search page', async () => {
    const res = await post(
      { type: 'Search', params: { time_range: HOUR, page_size: 5 } },
      '?actions_hint=true',
    );
    expect(res.statusCode, res.body).toBe(200);
    const { events, actions } = res.json().results as { events: Json[]; actions: Record<string, Hint[]> };
    expect(events).toHaveLength(5);
    expect(Object.keys(actions).sort()).toEqual(presentFields(events));
    expect(Object.keys(actions).sort()).toEqual(
      [
        'ev_id',
        'ts',
        'received_at',
        'stored_at',
        'host',
        'app',
        'message',
        'src_ip',
        'status',
        'intake',
        'client.ip',
        'http.path',
      ].sort(),
    );
    const ids = (f: string) => actions[f]?.map((a) => a.id);
    expect(ids('ev_id')).toEqual(['open_event', 'create_task']);
    expect(ids('ts')).toEqual([]);
    expect(ids('host')).toEqual(['filter_in', 'filter_out', 'top_values']);
    expect(ids('status')).toEqual(['filter_in', 'filter_out', 'top_values']);
    expect(ids('http.path')).toEqual(['filter_in', 'filter_out', 'top_values']);
    expect(ids('message')).toEqual(['filter_in', 'filter_out']);
    expect(ids('src_ip')).toEqual(['filter_in', 'filter_out', 'top_values', 'geoip']);
    expect(ids('client.ip')).toEqual(['filter_in', 'filter_out', 'top_values', 'geoip']);
    for (const list of Object.values(actions)) for (const a of list) expect(a.title).toBeTypeOf('string');
    expect(actions.host?.[0]).toEqual({
      id: 'filter_in',
      title: 'Filter for value',
      filter: { field: 'host', op: 'eq' },
    });
    expect(actions.host?.[2]).toMatchObject({
      method: 'POST',
      path: '/api/query',
      body: { type: 'TopN', params: { field: 'host', time_range: HOUR, filter: [], query: '' } },
    });
    // Without the flag: no actions.
    const plain = (await post({ type: 'Search', params: { time_range: HOUR, page_size: 5 } })).json();
    expect(plain.results).not.toHaveProperty('actions');
  });

  it('follows a projection: only the projected fields get actions', async () => {
    const q = (
      await post(
        { type: 'Search', params: { time_range: HOUR, fields: ['src_ip', 'user'] } },
        '?actions_hint=1',
      )
    ).json();
    // `user` is projected but never set.
    expect(Object.keys(q.results.actions).sort()).toEqual(['ev_id', 'src_ip', 'ts']);
    const paged = (await get(`/api/query/${q.query_id}?page=2&page_size=4&actions_hint=true`)).json();
    expect(paged.results.events).toHaveLength(4);
    expect(Object.keys(paged.results.actions).sort()).toEqual(['ev_id', 'src_ip', 'ts']);
  });

  it('gives hints a client can perform as they are', async () => {
    const search = { type: 'Search', params: { time_range: HOUR, query: 'status:200', page_size: 3 } };
    const q = (await post(search, '?actions_hint=true')).json();
    const actions = q.results.actions as Record<string, Hint[]>;
    const hint = (field: string, id: string) => actions[field]?.find((a) => a.id === id) as Hint;
    const evId = q.results.events[0].ev_id as string;

    // filter_in / filter_out: the condition, with the value, added to the Search's filter.
    const inCond = { ...hint('host', 'filter_in').filter, value: 'web-1' };
    const only = (
      await post({ ...search, params: { ...search.params, filter: [inCond], page_size: 50 } })
    ).json();
    expect(only.results.total).toBe(4);
    expect(new Set(only.results.events.map((e: Json) => e.host))).toEqual(new Set(['web-1']));
    const outCond = { ...hint('src_ip', 'filter_out').filter, value: '8.8.8.8' };
    const rest = (await post({ ...search, params: { ...search.params, filter: [outCond] } })).json();
    expect(rest.results.total).toBe(8 - 3);

    // top_values: the TopN over the same events as the Search.
    const top = await t.as(t.adminToken, fill(hint('src_ip', 'top_values'), null));
    expect(top.statusCode, top.body).toBe(200);
    // status:200 has 8.8.8.8 and 1.1.1.1 three times each, 10.0.0.1 twice.
    expect(top.json().results.total).toBe(8);
    expect(
      top
        .json()
        .results.items.map((i: Item & { count: number }) => [i.value, i.count])
        .sort(),
    ).toEqual([
      ['1.1.1.1', 3],
      ['10.0.0.1', 2],
      ['8.8.8.8', 3],
    ]);

    // geoip: the value's own TopN with its geo.
    const geo = await t.as(t.adminToken, fill(hint('src_ip', 'geoip'), '1.1.1.1'));
    expect(geo.statusCode, geo.body).toBe(200);
    expect(geo.json().results.items).toEqual([{ value: '1.1.1.1', count: 3, share: 1, geo: AU }]);

    // open_event and create_task on ev_id.
    const open = await t.as(t.adminToken, fill(hint('ev_id', 'open_event'), evId, evId));
    expect(open.statusCode).toBe(200);
    expect(open.json().ev_id).toBe(evId);
    const task = await t.as(t.adminToken, fill(hint('ev_id', 'create_task'), evId, evId));
    expect(task.statusCode, task.body).toBe(200);
    expect(task.json()).toMatchObject({ title: `Investigate event ${evId}`, ev_ids: [evId] });
  });

  it('adds actions to GET /api/events/{ev_id} when asked', async () => {
    const id = evIds[6] as string;
    const plain = (await get(`/api/events/${id}`)).json();
    expect(plain).not.toHaveProperty('actions');
    const res = await get(`/api/events/${id}?actions_hint=true`);
    expect(res.statusCode, res.body).toBe(200);
    const { actions, ...ev } = res.json() as Json & { actions: Record<string, Hint[]> };
    expect(ev).toEqual(plain);
    expect(Object.keys(actions).sort()).toEqual(presentFields([ev]));
    expect(actions.raw).toEqual([]);
    expect(actions.src_ip?.map((a) => a.id)).toEqual(['filter_in', 'filter_out', 'top_values', 'geoip']);
    expect(actions.ev_id?.map((a) => a.id)).toEqual(['open_event', 'create_task']);
    // The geoip hint is scoped to the event's second, so it finds the event.
    const geo = await t.as(t.adminToken, fill(actions.src_ip?.[3] as Hint, ev.src_ip));
    expect(geo.json().results.items).toEqual([{ value: '1.1.1.1', count: 1, share: 1, geo: AU }]);
  });
});

describe(`GeoIP configuration on ${BACKEND}`, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'logscope-geoip-http-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const topn = async (t: TestApp, field: string) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query?add_geoip_data=true',
      payload: { type: 'TopN', params: { time_range: HOUR, field } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.items as Item[];
  };

  it('uses a city database named by LOGSCOPE_GEOIP_CITY_PATH', async () => {
    const file = path.join(dir, 'GeoLite2-City.mmdb');
    writeFileSync(file, cityDb());
    const t = await createTestApp({ LOGSCOPE_GEOIP_CITY_PATH: file });
    try {
      expect(t.rt.warnings).toEqual([]);
      await seed(t);
      expect(Object.fromEntries((await topn(t, 'client.ip')).map((i) => [i.value, i.geo]))).toEqual({
        '81.2.69.142': {
          country_code: 'GB',
          country: 'United Kingdom',
          city: 'London',
          lat: 51.5142,
          lon: -0.0931,
        },
        // Not in this database.
        '2001:4860:4860::8888': undefined,
      });
    } finally {
      await t.close();
    }
  });

  it('starts with a warning when the configured file is missing or corrupt', async () => {
    const corrupt = path.join(dir, 'corrupt.mmdb');
    writeFileSync(corrupt, 'not an mmdb');
    for (const file of [path.join(dir, 'missing.mmdb'), corrupt]) {
      const t = await createTestApp({ LOGSCOPE_GEOIP_CITY_PATH: file });
      try {
        expect(t.rt.warnings).toHaveLength(1);
        expect(t.rt.warnings[0]).toContain(file);
        expect(t.rt.warnings[0]).toMatch(/bundled country database/);
        await seed(t);
        // The bundled database answers instead.
        expect((await topn(t, 'src_ip')).map((i) => i.geo)).toEqual([US, AU, undefined]);
      } finally {
        await t.close();
      }
    }
  });
});
