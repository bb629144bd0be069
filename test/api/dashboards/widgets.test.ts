import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

const topHosts = { type: 'TopN', params: { field: 'host' } };

describe(`widgets on ${BACKEND}`, () => {
  let t: TestApp;
  let owner: { id: number; token: string };
  let other: { id: number; token: string };
  let dm: { id: number; token: string };
  let wm: { id: number; token: string };
  let ingest: string;
  let board: { id: number; widgets: Array<{ id: number }> };
  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.user('owen');
    other = await t.user('otto');
    dm = await t.user('dana', { permissions: ['manage_dashboards'] });
    wm = await t.user('will', { permissions: ['manage_widgets'] });
    ingest = (await t.rt.services.tokens.create(owner.id, { token_type: 'INGEST' })).secret_key;
    const res = await req(owner.token, 'POST', '/api/dashboards', {
      title: 'Board',
      widgets: [
        { title: 'Hosts', query: topHosts },
        { title: 'Apps', query: { type: 'TopN', params: { field: 'app' } } },
      ],
    });
    board = res.json();
  });
  afterAll(() => t.close());

  const req = (token: string, method: InjectOptions['method'], url: string, payload?: unknown) =>
    t.as(token, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const ids = async (token: string, qs = '') =>
    (await req(token, 'GET', `/api/widgets${qs}`)).json().results.map((w: { id: number }) => w.id);

  it('lists own widgets; everyone’s with show_all for manage_widgets holders and admins', async () => {
    const mine = board.widgets.map((w) => w.id);
    expect(await ids(owner.token)).toEqual(mine);
    expect(await ids(other.token, '?show_all=true')).toEqual([]);
    expect(await ids(wm.token)).toEqual([]);
    expect(await ids(wm.token, '?show_all=true')).toEqual(mine);
    // manage_dashboards does not lift the widget list's owner restriction.
    expect(await ids(dm.token, '?show_all=true')).toEqual([]);
    expect(await ids(t.adminToken, '?show_all=1')).toEqual(mine);
    const list = (await req(owner.token, 'GET', '/api/widgets/?ordering=-title')).json();
    expect(list).toMatchObject({ count: 2, next: null, previous: null });
    expect(list.results.map((w: { title: string }) => w.title)).toEqual(['Hosts', 'Apps']);
    expect((await req(owner.token, 'GET', '/api/widgets?ordering=nope')).statusCode).toBe(400);
  });

  it('filters by exact title and exports the portable form', async () => {
    const res = (await req(owner.token, 'GET', '/api/widgets?title=Apps')).json();
    expect(res.results.map((w: { title: string }) => w.title)).toEqual(['Apps']);
    expect((await req(owner.token, 'GET', '/api/widgets?title=apps')).json().count).toBe(0);
    const exported = (await req(owner.token, 'GET', '/api/widgets?export=true&title=Apps')).json();
    expect(exported.results).toEqual([
      {
        title: 'Apps',
        description: '',
        query: {
          type: 'TopN',
          params: { field: 'app', n: 10, time_range: { preset: 'last_hour' }, filter: [], query: '' },
        },
        visualization: { kind: 'table', options: {} },
        position: { x: 0, y: 4, w: 6, h: 4 },
        refresh_interval: null,
      },
    ]);
  });

  it('reads a widget: owner, through a visible dashboard, or with manage_widgets; others 404', async () => {
    const id = board.widgets[0]!.id;
    const own = await req(owner.token, 'GET', `/api/widgets/${id}/`);
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ id, owner: owner.id, read_only: false, dashboards: [board.id] });
    for (const token of [wm.token, dm.token, t.adminToken]) {
      const res = await req(token, 'GET', `/api/widgets/${id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json().read_only).toBe(true);
    }
    // manage_widgets alone does not reveal the dashboards it is on.
    expect((await req(wm.token, 'GET', `/api/widgets/${id}`)).json().dashboards).toEqual([]);
    expect((await req(other.token, 'GET', `/api/widgets/${id}`)).statusCode).toBe(404);
    expect((await req(other.token, 'GET', `/api/widgets/${id}?export=true`)).statusCode).toBe(404);
    expect((await req(owner.token, 'GET', '/api/widgets/999999')).statusCode).toBe(404);
    expect((await req(owner.token, 'GET', '/api/widgets/x')).statusCode).toBe(400);
  });

  it('only the owner changes or deletes it: invisible 404, visible but not owned 403, INGEST 403', async () => {
    const id = board.widgets[1]!.id;
    const calls: Array<[InjectOptions['method'], object?]> = [
      ['PATCH', { title: 'x' }],
      ['PUT', { title: 'x', query: topHosts }],
      ['DELETE'],
    ];
    for (const [method, body] of calls) {
      expect((await req(other.token, method, `/api/widgets/${id}`, body)).statusCode).toBe(404);
      for (const token of [wm.token, dm.token, t.adminToken]) {
        const res = await req(token, method, `/api/widgets/${id}`, body);
        expect(res.statusCode, method).toBe(403);
        expect(res.json().code).toBe('permission_denied');
      }
      expect((await req(ingest, method, `/api/widgets/${id}`, body)).statusCode).toBe(403);
    }
    expect((await req(ingest, 'GET', `/api/widgets/${id}`)).statusCode).toBe(403);
    expect((await req(ingest, 'GET', '/api/widgets')).statusCode).toBe(403);
    expect((await req(owner.token, 'GET', `/api/widgets/${id}`)).json().title).toBe('Apps');
  });

  it('PATCH changes some fields; PUT needs title and query and keeps what it leaves out', async () => {
    const created = await req(owner.token, 'POST', `/api/dashboards/${board.id}/widgets`, {
      title: 'Editable',
      description: 'd',
      query: topHosts,
      visualization: { kind: 'bar', options: { color: 'red' } },
      refresh_interval: 10,
    });
    expect(created.statusCode, created.body).toBe(200);
    const w = created.json();
    // Put below the two existing widgets.
    expect(w.position).toEqual({ x: 0, y: 8, w: 6, h: 4 });
    const patched = await req(owner.token, 'PATCH', `/api/widgets/${w.id}`, {
      visualization: { kind: 'number' },
      refresh_interval: null,
      position: { x: 6, y: 0, w: 6, h: 2 },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json()).toMatchObject({
      title: 'Editable',
      description: 'd',
      visualization: { kind: 'number', options: {} },
      refresh_interval: null,
      position: { x: 6, y: 0, w: 6, h: 2 },
      query: w.query,
    });
    expect(patched.json().updated_at >= w.updated_at).toBe(true);
    const noQuery = await req(owner.token, 'PUT', `/api/widgets/${w.id}`, { title: 'x' });
    expect(noQuery.statusCode).toBe(400);
    expect(noQuery.json().errors).toHaveProperty('query');
    const put = await req(owner.token, 'PUT', `/api/widgets/${w.id}/`, {
      title: 'Replaced',
      query: { type: 'Summary', params: { group_by: ['host'] } },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      title: 'Replaced',
      description: 'd',
      position: { x: 6, y: 0, w: 6, h: 2 },
      query: { type: 'Summary', params: { group_by: ['host'], metrics: [{ op: 'count' }], n: 100 } },
    });
    const form = await t.as(owner.token, {
      method: 'PATCH',
      url: `/api/widgets/${w.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `title=Form&query=${encodeURIComponent(JSON.stringify(topHosts))}&refresh_interval=15`,
    });
    expect(form.statusCode, form.body).toBe(200);
    expect(form.json()).toMatchObject({ title: 'Form', refresh_interval: 15, query: { type: 'TopN' } });
  });

  it('validates queries (errors under query.) and rejects unknown fields, changing nothing', async () => {
    const id = board.widgets[0]!.id;
    const before = (await req(owner.token, 'GET', `/api/widgets/${id}`)).json();
    const cases: Array<[object, string]> = [
      [{ query: { type: 'TopN', params: {} } }, 'query.params.field'],
      [{ query: { type: 'TopN', params: { field: 'host', n: 0 } } }, 'query.params.n'],
      [{ query: { type: 'Bogus' } }, 'query.type'],
      [
        { query: { type: 'Search', params: { time_range: { preset: 'whenever' } } } },
        'query.params.time_range',
      ],
      [{ query: { type: 'Search', params: { query: 'status:>=' } } }, 'query.params.query'],
      [{ query: { type: 'TopN', params: { field: 'host', bogus: 1 } } }, 'query.params.bogus'],
      [{ query: { type: 'TopN' }, extra: 1 }, 'extra'],
      [{ owner: 3 }, 'owner'],
      [{ read_only: false }, 'read_only'],
      [{ visualization: { kind: 'gauge' } }, 'visualization.kind'],
      [{ position: { x: 0, y: 0, w: 0, h: 1 } }, 'position.w'],
      [{ title: '' }, 'title'],
    ];
    for (const [payload, field] of cases) {
      const res = await req(owner.token, 'PATCH', `/api/widgets/${id}`, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(Object.keys(res.json().errors ?? {}), `${JSON.stringify(payload)} → ${res.body}`).toContain(
        field,
      );
    }
    expect((await req(owner.token, 'GET', `/api/widgets/${id}`)).json()).toEqual(before);
    // An error names the allowed values, not the schema's inner workings.
    const kind = await req(owner.token, 'PATCH', `/api/widgets/${id}`, { visualization: { kind: 'gauge' } });
    expect(kind.json().errors['visualization.kind']).toEqual([
      'Must be one of table, bar, line, area, pie, number, map, list.',
    ]);
    expect(kind.json().detail).toMatch(
      /^Invalid input: visualization\.kind: Must be one of table, [a-z, ]+\.$/,
    );
    const pos = await req(owner.token, 'PATCH', `/api/widgets/${id}`, {
      position: { x: 'a', y: 0, w: 1, h: 1 },
    });
    expect(pos.json().errors['position.x']).toEqual(['Must be an integer.']);
  });

  it('DELETE removes the widget from every dashboard it is on', async () => {
    const d2 = (
      await req(owner.token, 'POST', '/api/dashboards', { title: 'Second', widgets: [board.widgets[0]!.id] })
    ).json();
    expect(d2.widgets[0].dashboards).toEqual([board.id, d2.id]);
    const del = await req(owner.token, 'DELETE', `/api/widgets/${board.widgets[0]!.id}/`);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    expect((await req(owner.token, 'GET', `/api/dashboards/${d2.id}`)).json().widgets).toEqual([]);
    const first = (await req(owner.token, 'GET', `/api/dashboards/${board.id}`)).json();
    expect(first.widgets.map((w: { id: number }) => w.id)).not.toContain(board.widgets[0]!.id);
    expect((await req(owner.token, 'DELETE', `/api/widgets/${board.widgets[0]!.id}`)).statusCode).toBe(404);
  });

  it('cannot attach by id a widget the caller cannot see', async () => {
    const res = await req(other.token, 'POST', '/api/dashboards', {
      title: 'Steal',
      widgets: [board.widgets[1]!.id],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toHaveProperty(['widgets.0']);
    // A manage_widgets holder sees every widget, so may attach one (read-only to them).
    const ok = await req(wm.token, 'POST', '/api/dashboards', {
      title: 'Borrow',
      widgets: [board.widgets[1]!.id],
    });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json().widgets[0]).toMatchObject({ read_only: true, owner: owner.id });
  });
});
