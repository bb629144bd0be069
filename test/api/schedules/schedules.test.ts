import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };

/**
 * The UTC instants whose wall-clock reading in `zone` is `local` (`2027-03-28T02:30`),
 * found by reading every minute of the day around it through Intl: no cron library. When
 * none matches (a spring-forward gap), the first instant whose reading is later.
 */
function wallClock(zone: string, local: string): { matches: string[]; afterGap: string | null } {
  const read = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const reading = (ms: number) => {
    const p = Object.fromEntries(read.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
    return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
  };
  const base = Date.parse(`${local}:00Z`);
  const matches: string[] = [];
  let afterGap: string | null = null;
  for (let ms = base - 15 * 3_600_000; ms <= base + 15 * 3_600_000; ms += 60_000) {
    const r = reading(ms);
    if (r === local) matches.push(new Date(ms).toISOString());
    else if (afterGap === null && r > local && r.slice(0, 10) === local.slice(0, 10))
      afterGap = new Date(ms).toISOString();
  }
  return { matches, afterGap };
}

/** /api/schedules (docs/api/schedules.md): CRUD, the list conventions, validation and preview. */
describe(`report schedules on ${BACKEND}`, () => {
  let t: TestApp;
  let ada: Who;
  let ben: Who;
  let dashboard: number;
  let search: number;
  let adaMail: number;
  let benMail: number;
  let pager: number;
  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_SCHEDULES_PER_USER: '4' });
    ada = await t.user('ada');
    ben = await t.user('ben');
    dashboard = (await call(ada.token, 'POST', '/api/dashboards', { title: 'Ops' })).json().id;
    search = (
      await call(ada.token, 'POST', '/api/saved-searches', { title: 'Errors', query: 'severity:error' })
    ).json().id;
    const channel = async (who: Who, body: object) => {
      const res = await call(who.token, 'POST', '/api/channels', body);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as number;
    };
    adaMail = await channel(ada, { name: 'ada mail', type: 'email', config: { to: ['ada@example.test'] } });
    benMail = await channel(ben, { name: 'ben mail', type: 'email', config: { to: ['ben@example.test'] } });
    pager = await channel(ada, { name: 'pager', type: 'pagerduty', config: { routing_key: 'r'.repeat(32) } });
  });
  afterAll(() => t.close());

  const valid = () => ({
    name: 'Weekly errors',
    source: { saved_search_id: search },
    format: 'csv',
    cron: '0 8 * * 1',
    time_zone: 'Europe/Berlin',
  });

  it('creates a schedule with its defaults and its next run; the owner and admins see it, others 404', async () => {
    const res = await call(ada.token, 'POST', '/api/schedules', { ...valid(), time_zone: 'europe/berlin' });
    expect(res.statusCode, res.body).toBe(201);
    const s = res.json();
    expect(s).toMatchObject({
      name: 'Weekly errors',
      description: '',
      owner: ada.id,
      source: { saved_search_id: search },
      format: 'csv',
      time_range: null,
      cron: '0 8 * * 1',
      time_zone: 'Europe/Berlin',
      deliver_to: [],
      enabled: true,
      keep_reports: 10,
      last_run: null,
    });
    // A Monday at 08:00 in Berlin: 06:00Z or 07:00Z, strictly in the future, within a week.
    const next = Date.parse(s.next_run_at);
    expect(next).toBeGreaterThan(Date.now());
    expect(next - Date.now()).toBeLessThanOrEqual(7 * 86_400_000);
    expect(new Date(next).getUTCDay()).toBe(1);
    expect([6, 7]).toContain(new Date(next).getUTCHours());
    expect((await call(t.adminToken, 'GET', `/api/schedules/${s.id}`)).statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', `/api/schedules/${s.id}`],
      ['PATCH', `/api/schedules/${s.id}`],
      ['DELETE', `/api/schedules/${s.id}`],
      ['POST', `/api/schedules/${s.id}/run`],
    ] as const)
      expect(
        (await call(ben.token, method, url, method === 'PATCH' ? { name: 'x' } : undefined)).statusCode,
      ).toBe(404);
    expect((await call(ben.token, 'GET', '/api/schedules')).json().count).toBe(0);
  });

  it('changes what PATCH gives, resets what PUT omits, moves next_run_at with cron, zone or enabled', async () => {
    const made = (
      await call(ada.token, 'POST', '/api/schedules', { ...valid(), description: 'd', keep_reports: 3 })
    ).json();
    const patched = await call(ada.token, 'PATCH', `/api/schedules/${made.id}`, { name: 'Renamed' });
    expect(patched.json()).toMatchObject({
      name: 'Renamed',
      description: 'd',
      keep_reports: 3,
      next_run_at: made.next_run_at,
    });
    const off = (await call(ada.token, 'PATCH', `/api/schedules/${made.id}`, { enabled: false })).json();
    expect(off.next_run_at).toBeNull();
    const on = (
      await call(ada.token, 'PATCH', `/api/schedules/${made.id}`, {
        enabled: true,
        cron: '0 9 * * *',
        time_zone: 'UTC',
      })
    ).json();
    expect(new Date(on.next_run_at).getUTCHours()).toBe(9);
    const put = await call(ada.token, 'PUT', `/api/schedules/${made.id}`, {
      name: 'Put',
      source: { dashboard_id: dashboard },
      format: 'pdf',
      cron: '*/15 * * * *',
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      name: 'Put',
      description: '',
      keep_reports: 10,
      time_zone: 'UTC',
      enabled: true,
    });
    expect(Date.parse(put.json().next_run_at) % 900_000).toBe(0);
    expect((await call(ada.token, 'DELETE', `/api/schedules/${made.id}`)).statusCode).toBe(204);
    expect((await call(ada.token, 'GET', `/api/schedules/${made.id}`)).statusCode).toBe(404);
  });

  it('lists with filters, ordering and the admin’s show_all', async () => {
    await call(ada.token, 'POST', '/api/schedules', { ...valid(), name: 'Zeta nightly', enabled: false });
    const names = async (token: string, qs: string) => {
      const res = await call(token, 'GET', `/api/schedules${qs}`);
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().results as Array<{ name: string }>).map((s) => s.name);
    };
    expect(await names(ada.token, '?ordering=-name')).toEqual(['Zeta nightly', 'Weekly errors']);
    expect(await names(ada.token, '?name=NIGHT')).toEqual(['Zeta nightly']);
    expect(await names(ada.token, '?enabled=false')).toEqual(['Zeta nightly']);
    expect(await names(t.adminToken, '')).toEqual([]);
    expect(await names(t.adminToken, `?show_all=true&owner=${ada.id}&ordering=name`)).toEqual([
      'Weekly errors',
      'Zeta nightly',
    ]);
    const bad = await call(ada.token, 'GET', '/api/schedules?ordering=cron');
    expect(bad.statusCode).toBe(400);
  });

  it('refuses bad values with a 400 on the field at fault', async () => {
    const cases: Array<[object, string, RegExp?]> = [
      [{ cron: '0 24 * * *' }, 'cron', /hour: 24 is outside 0-23/],
      [{ cron: '0 0 30 2 *' }, 'cron', /never runs/],
      [{ cron: '@daily' }, 'cron'],
      [{ cron: '0 0 * * * *' }, 'cron'],
      [{ cron: '0 0 L * *' }, 'cron', /day-of-month/],
      [{ cron: `0 0 ${'1,'.repeat(60)}1 * *` }, 'cron', /100 characters/],
      [{ time_zone: 'CEST' }, 'time_zone'],
      [{ time_zone: 'Mars/Olympus' }, 'time_zone'],
      [{ format: 'json' }, 'format'],
      [{ name: '   ' }, 'name'],
      [{ time_range: { ts_from: 1, ts_to: 2 } }, 'time_range'],
      [{ time_range: { preset: 'last_fortnight' } }, 'time_range'],
      [{ source: { dashboard_id: 999_999 } }, 'source.dashboard_id'],
      [{ source: { saved_search_id: 999_999 } }, 'source.saved_search_id'],
      [{ source: { dashboard_id: dashboard, saved_search_id: search } }, 'source'],
      [{ deliver_to: [benMail] }, 'deliver_to'],
      [{ deliver_to: [999_999] }, 'deliver_to'],
      [{ deliver_to: [pager] }, 'deliver_to', /carries no report/],
      [{ keep_reports: 0 }, 'keep_reports'],
    ];
    for (const [change, field, message] of cases) {
      const res = await call(ada.token, 'POST', '/api/schedules', { ...valid(), ...change });
      expect(res.statusCode, `${JSON.stringify(change)}: ${res.body}`).toBe(400);
      const errors = res.json().errors as Record<string, string[]>;
      expect(Object.keys(errors), JSON.stringify(change)).toContain(field);
      if (message) expect(errors[field]?.join(' ')).toMatch(message);
    }
    // Ben cannot use Ada's dashboard either: the source is checked as the owner sees it.
    const other = await call(ben.token, 'POST', '/api/schedules', {
      ...valid(),
      source: { dashboard_id: dashboard },
    });
    expect(Object.keys(other.json().errors ?? {})).toContain('source.dashboard_id');
    // Ada's own channel is fine.
    const ok = await call(ada.token, 'POST', '/api/schedules', { ...valid(), deliver_to: [adaMail] });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('takes a form body with nested values as JSON text', async () => {
    const form = new URLSearchParams({
      name: 'From a form',
      source: JSON.stringify({ saved_search_id: search }),
      format: 'xlsx',
      cron: '15 6 * * MON-FRI',
      time_range: JSON.stringify({ preset: 'last_24_hours' }),
      deliver_to: JSON.stringify([adaMail]),
      enabled: 'false',
      keep_reports: '3',
    });
    const res = await t.as(ada.token, {
      method: 'POST',
      url: '/api/schedules',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form.toString(),
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      source: { saved_search_id: search },
      time_range: { preset: 'last_24_hours' },
      deliver_to: [adaMail],
      enabled: false,
      keep_reports: 3,
      next_run_at: null,
    });
    expect((await call(ada.token, 'DELETE', `/api/schedules/${res.json().id}`)).statusCode).toBe(204);
  });

  it('stops at schedulesPerUser with 409 limit_reached', async () => {
    let res = await call(ada.token, 'POST', '/api/schedules', valid());
    for (let i = 0; i < 5 && res.statusCode === 201; i++)
      res = await call(ada.token, 'POST', '/api/schedules', valid());
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe('limit_reached');
  });

  it('refuses INGEST tokens, and goes with its owner', async () => {
    const cleo = await t.user('cleo');
    const ingest = (await t.rt.services.tokens.create(cleo.id, { token_type: 'INGEST' })).secret_key;
    expect((await call(ingest, 'GET', '/api/schedules')).statusCode).toBe(403);
    expect((await call(ingest, 'POST', '/api/schedules', valid())).statusCode).toBe(403);
    const search = (
      await call(cleo.token, 'POST', '/api/saved-searches', { title: 'Mine', query: '' })
    ).json().id;
    const made = await call(cleo.token, 'POST', '/api/schedules', {
      ...valid(),
      source: { saved_search_id: search },
    });
    expect(made.statusCode, made.body).toBe(201);
    expect((await call(t.adminToken, 'DELETE', `/api/users/${cleo.id}`)).statusCode).toBe(204);
    expect((await call(t.adminToken, 'GET', `/api/schedules/${made.json().id}`)).statusCode).toBe(404);
  });

  it('previews a cron: its reading and next runs, Vixie’s DST rule in the zone', async () => {
    const preview = async (qs: string) => {
      const res = await call(ada.token, 'GET', `/api/schedules/preview?${qs}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { description: string; next_runs: string[]; time_zone: string };
    };
    const monday = await preview(
      'cron=0%208%20*%20*%201&time_zone=Europe/Berlin&from=2027-01-01T00:00:00Z&count=2',
    );
    expect(monday.description).toBe('every Monday at 08:00 (Europe/Berlin)');
    expect(monday.next_runs).toEqual(['2027-01-04T07:00:00.000Z', '2027-01-11T07:00:00.000Z']);

    const dayAfter = (day: string) =>
      new Date(Date.parse(`${day}T12:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
    const dayBefore = (day: string) =>
      new Date(Date.parse(`${day}T12:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    // Spring forward: 02:30 does not exist that day; it runs at the first instant after the gap.
    for (const [zone, day] of [
      ['Europe/Paris', '2027-03-28'],
      ['America/New_York', '2027-03-14'],
    ] as const) {
      const gap = wallClock(zone, `${day}T02:30`);
      expect(gap.matches).toEqual([]);
      const runs = (
        await preview(`cron=30%202%20*%20*%20*&time_zone=${zone}&from=${dayBefore(day)}T12:00:00Z&count=2`)
      ).next_runs;
      expect(runs, zone).toEqual([gap.afterGap, wallClock(zone, `${dayAfter(day)}T02:30`).matches[0]]);
    }
    // Fall back: a repeated wall-clock time runs at its first occurrence only.
    for (const [zone, day, time] of [
      ['Europe/Paris', '2027-10-31', '02:30'],
      ['America/New_York', '2027-11-07', '01:30'],
    ] as const) {
      const twice = wallClock(zone, `${day}T${time}`);
      expect(twice.matches).toHaveLength(2);
      const cron = `30%20${Number(time.slice(0, 2))}%20*%20*%20*`;
      const runs = (await preview(`cron=${cron}&time_zone=${zone}&from=${dayBefore(day)}T12:00:00Z&count=2`))
        .next_runs;
      expect(runs, zone).toEqual([twice.matches[0], wallClock(zone, `${dayAfter(day)}T${time}`).matches[0]]);
    }
    // An expression with * runs at every matching reading: across fall-back, every half hour of UTC.
    const halves = (
      await preview('cron=*/30%20*%20*%20*%20*&time_zone=Europe/Berlin&from=2027-10-30T23:45:00Z&count=4')
    ).next_runs;
    expect(halves).toEqual([
      '2027-10-31T00:00:00.000Z',
      '2027-10-31T00:30:00.000Z',
      '2027-10-31T01:00:00.000Z',
      '2027-10-31T01:30:00.000Z',
    ]);
    // Unix seconds as `from`; the default count is 5.
    const utc = await preview('cron=0%200%201%20*%20*&from=1798761600');
    expect(utc.time_zone).toBe('UTC');
    expect(utc.next_runs).toHaveLength(5);
    expect(utc.next_runs[0]).toBe('2027-02-01T00:00:00.000Z');
  });

  it('names the bad preview parameter', async () => {
    for (const [qs, field] of [
      ['cron=0%2024%20*%20*%20*', 'cron'],
      ['cron=0%200%20*%20*%20*&time_zone=CEST', 'time_zone'],
      ['cron=0%200%20*%20*%20*&from=yesterday', 'from'],
      ['cron=0%200%20*%20*%20*&count=101', 'count'],
    ] as const) {
      const res = await call(ada.token, 'GET', `/api/schedules/preview?${qs}`);
      expect(res.statusCode, res.body).toBe(400);
      expect(Object.keys(res.json().errors)).toContain(field);
    }
  });
});
