import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

describe(`GET /api/fields on ${BACKEND}`, () => {
  let t: TestApp;
  let user: { id: number; token: string };
  const get = (qs: string, token = user.token) => t.as(token, { method: 'GET', url: `/api/fields${qs}` });

  beforeAll(async () => {
    t = await createTestApp();
    user = await t.user('reader');
    const now = Date.now() / 1000;
    const lines = [
      ...Array.from({ length: 6 }, (_, i) => ({
        host: 'web-1',
        app: 'nginx',
        status: 200,
        message: `ok ${i}`,
        src_ip: '10.0.0.1',
        path: '/a',
      })),
      ...Array.from({ length: 3 }, (_, i) => ({
        host: 'web-2',
        app: 'nginx',
        status: 500,
        message: `bad ${i}`,
        path: '/b',
        latency_ms: 12.5,
      })),
      {
        host: 'db-1',
        app: 'postgres',
        severity: 'error',
        message: 'deadlock',
        client: '192.168.1.7',
        tags: ['a', 'b'],
      },
      // Outside the last hour: not counted by the default range.
      { host: 'old-1', message: 'old', timestamp: now - 7200 },
    ];
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: 11 });
  });
  afterAll(() => t.close());

  it('lists the fields of the matching events, most common first, with types and top values', async () => {
    const res = await get('');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ sampled: false, events: 10, total: 10 });
    const byName = Object.fromEntries(body.fields.map((f: { name: string }) => [f.name, f]));
    expect(body.fields[0].count).toBe(10);
    expect(byName.host).toEqual({
      name: 'host',
      type: 'string',
      count: 10,
      top: [
        { value: 'web-1', count: 6 },
        { value: 'web-2', count: 3 },
        { value: 'db-1', count: 1 },
      ],
    });
    expect(byName.status).toMatchObject({
      type: 'number',
      count: 9,
      top: [
        { value: 200, count: 6 },
        { value: 500, count: 3 },
      ],
    });
    expect(byName.src_ip).toMatchObject({ type: 'ip', count: 6 });
    expect(byName.client).toMatchObject({ type: 'ip', count: 1, top: [{ value: '192.168.1.7', count: 1 }] });
    expect(byName.latency_ms).toMatchObject({ type: 'number', count: 3 });
    expect(byName.ts).toMatchObject({ type: 'time', count: 10, top: [] });
    expect(byName.tags).toMatchObject({ type: 'string', top: [{ value: '["a","b"]', count: 1 }] });
    expect(byName.ev_id).toBeUndefined();
    expect(body.fields.map((f: { count: number }) => f.count)).toEqual(
      [...body.fields.map((f: { count: number }) => f.count)].sort((a, b) => b - a),
    );
  });

  it('follows the query and the time range (JSON or preset)', async () => {
    const nginx = (await get('?query=app:nginx')).json();
    expect(nginx.total).toBe(9);
    expect(nginx.fields.find((f: { name: string }) => f.name === 'client')).toBeUndefined();
    const day = (await get('?preset=last_24_hours')).json();
    expect(day.total).toBe(11);
    const now = Math.floor(Date.now() / 1000);
    const json = await get(
      `?time_range=${encodeURIComponent(JSON.stringify({ ts_from: now - 10_000, ts_to: now - 3600 }))}`,
    );
    expect(json.json()).toMatchObject({
      total: 1,
      fields: expect.arrayContaining([
        expect.objectContaining({ name: 'host', top: [{ value: 'old-1', count: 1 }] }),
      ]),
    });
  });

  it('refuses bad input with a 400 naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['?query=status:>=', 'params.query'],
      ['?time_range=nope', 'time_range'],
      ['?preset=last_fortnight', 'params.time_range'],
      ['?preset=last_hour&time_range={}', 'time_range'],
    ];
    for (const [qs, field] of cases) {
      const res = await get(qs);
      expect(res.statusCode, `${qs} → ${res.body}`).toBe(400);
      expect(Object.keys(res.json().errors ?? {}), `${qs} → ${res.body}`).toContain(field);
    }
  });

  it('needs a user token', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/fields' })).statusCode).toBe(401);
  });
});
