import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { demoGenerator } from '../../../src/cli/demo-generator.js';
import { BUILTIN_TEMPLATES } from '../../../src/features/dashboards/builtin-templates.js';
import { DashboardsRepository } from '../../../src/features/dashboards/dashboards-repository.js';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

const topHosts = { type: 'TopN', params: { field: 'host' } };
const widget = (title: string, extra: object = {}) => ({ title, query: topHosts, ...extra });

interface WidgetBody {
  id: number;
  title: string;
  owner: number;
  read_only: boolean;
  dashboards: number[];
  query: { type: string; params: Record<string, unknown> };
  position: { x: number; y: number; w: number; h: number };
}

describe(`dashboards on ${BACKEND}`, () => {
  let t: TestApp;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };
  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
  });
  afterAll(() => t.close());

  const req = (token: string, method: InjectOptions['method'], url: string, payload?: unknown) =>
    t.as(token, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = async (token: string, body: object, qs = '') => {
    const res = await req(token, 'POST', `/api/dashboards${qs}`, body);
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const count = async (table: 'dashboards' | 'widgets' | 'dashboard_widgets' | 'dashboard_templates') =>
    Number(
      (
        await t.rt.meta.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const widgetExists = async (id: number) =>
    (await req(t.adminToken, 'GET', `/api/widgets/${id}`)).statusCode;

  describe('CRUD', () => {
    it('creates a dashboard with inline widgets, queries stored with defaults, positions stacked', async () => {
      const d = await create(alice.token, {
        title: 'Ops',
        description: 'Main board',
        widgets: [widget('Hosts'), widget('Apps', { visualization: { kind: 'pie' }, refresh_interval: 30 })],
      });
      expect(Object.keys(d).sort()).toEqual(
        ['created_at', 'description', 'id', 'owner', 'title', 'updated_at', 'widgets'].sort(),
      );
      expect(d).toMatchObject({ title: 'Ops', description: 'Main board', owner: alice.id });
      expect(d.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(d.widgets.map((w: WidgetBody) => w.title)).toEqual(['Hosts', 'Apps']);
      const [w1, w2] = d.widgets;
      expect(Object.keys(w1).sort()).toEqual(
        [
          'created_at',
          'dashboards',
          'description',
          'id',
          'owner',
          'position',
          'query',
          'read_only',
          'refresh_interval',
          'title',
          'updated_at',
          'visualization',
        ].sort(),
      );
      expect(w1).toMatchObject({
        owner: alice.id,
        read_only: false,
        dashboards: [d.id],
        description: '',
        refresh_interval: null,
        visualization: { kind: 'table', options: {} },
        position: { x: 0, y: 0, w: 6, h: 4 },
      });
      expect(w1.query).toEqual({
        type: 'TopN',
        params: { field: 'host', n: 10, time_range: { preset: 'last_hour' }, filter: [], query: '' },
      });
      expect(w2).toMatchObject({
        visualization: { kind: 'pie', options: {} },
        refresh_interval: 30,
        position: { x: 0, y: 4, w: 6, h: 4 },
      });
    });

    it('accepts urlencoded and multipart bodies with nested values as JSON text', async () => {
      const form = await t.as(alice.token, {
        method: 'POST',
        url: '/api/dashboards',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          title: 'Form',
          widgets: JSON.stringify([widget('F')]),
        }).toString(),
      });
      expect(form.statusCode, form.body).toBe(201);
      expect(form.json().widgets[0].title).toBe('F');
      const fd = new FormData();
      fd.append('title', 'Multi');
      const multi = await t.as(alice.token, { method: 'POST', url: '/api/dashboards', payload: fd });
      expect(multi.statusCode, multi.body).toBe(201);
      expect(multi.json().widgets).toEqual([]);
      const fw = new FormData();
      fw.append('title', 'FW');
      fw.append('query', JSON.stringify(topHosts));
      fw.append('position', JSON.stringify({ x: 1, y: 2, w: 3, h: 4 }));
      fw.append('refresh_interval', '');
      const added = await t.as(alice.token, {
        method: 'POST',
        url: `/api/dashboards/${multi.json().id}/widgets`,
        payload: fw,
      });
      expect(added.statusCode, added.body).toBe(200);
      expect(added.json()).toMatchObject({ position: { x: 1, y: 2, w: 3, h: 4 }, refresh_interval: null });
    });

    it('reads, patches, puts and deletes, with and without a trailing slash', async () => {
      const d = await create(alice.token, { title: 'Edit me', widgets: [widget('A'), widget('B')] });
      const got = await req(alice.token, 'GET', `/api/dashboards/${d.id}/`);
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(d);
      const patched = await req(alice.token, 'PATCH', `/api/dashboards/${d.id}`, { description: 'new' });
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json()).toMatchObject({ title: 'Edit me', description: 'new' });
      expect(patched.json().updated_at >= d.updated_at).toBe(true);
      // PUT needs the title; fields left out keep their values.
      const noTitle = await req(alice.token, 'PUT', `/api/dashboards/${d.id}`, { description: 'x' });
      expect(noTitle.statusCode).toBe(400);
      expect(noTitle.json().errors).toHaveProperty('title');
      const [a, b] = d.widgets.map((w: WidgetBody) => w.id);
      const put = await req(alice.token, 'PUT', `/api/dashboards/${d.id}/`, {
        title: 'Edited',
        widgets: [b, a],
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json()).toMatchObject({ title: 'Edited', description: 'new' });
      expect(put.json().widgets.map((w: WidgetBody) => w.id)).toEqual([b, a]);
      // A layout may also add inline widgets; widgets left out are detached (and deleted).
      const relaid = await req(alice.token, 'PATCH', `/api/dashboards/${d.id}`, {
        widgets: [a, widget('C')],
      });
      expect(relaid.statusCode, relaid.body).toBe(200);
      expect(relaid.json().widgets.map((w: WidgetBody) => w.title)).toEqual(['A', 'C']);
      expect(await widgetExists(b)).toBe(404);
      const del = await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/`);
      expect(del.statusCode).toBe(204);
      expect(del.body).toBe('');
      expect((await req(alice.token, 'GET', `/api/dashboards/${d.id}`)).statusCode).toBe(404);
      expect(await widgetExists(a)).toBe(404);
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d.id}`)).statusCode).toBe(404);
    });

    it('deleting a dashboard keeps the widgets that are also on another one', async () => {
      const d1 = await create(alice.token, { title: 'One', widgets: [widget('shared'), widget('only')] });
      const [shared, only] = d1.widgets.map((w: WidgetBody) => w.id);
      const d2 = await create(alice.token, { title: 'Two', widgets: [shared] });
      expect(d2.widgets[0]).toMatchObject({ id: shared, read_only: false });
      expect(d2.widgets[0].dashboards).toEqual([d1.id, d2.id]);
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d1.id}`)).statusCode).toBe(204);
      expect(await widgetExists(only)).toBe(404);
      const kept = (await req(alice.token, 'GET', `/api/widgets/${shared}`)).json();
      expect(kept.dashboards).toEqual([d2.id]);
    });

    it('lists in the pagination envelope with ordering', async () => {
      const carol = await t.user('carol');
      for (const title of ['b', 'c', 'a']) await create(carol.token, { title });
      const list = await req(carol.token, 'GET', '/api/dashboards?ordering=-title&page_size=2');
      expect(list.statusCode).toBe(200);
      const body = list.json();
      expect(body.count).toBe(3);
      expect(body.results.map((d: { title: string }) => d.title)).toEqual(['c', 'b']);
      expect(body.next).toContain('page=2');
      expect((await req(carol.token, 'GET', '/api/dashboards?page=3&page_size=2')).statusCode).toBe(404);
      expect((await req(carol.token, 'GET', '/api/dashboards?ordering=bogus')).statusCode).toBe(400);
      const byOwner = await req(carol.token, 'GET', '/api/dashboards?ordering=owner,-id');
      expect(byOwner.json().results.map((d: { title: string }) => d.title)).toEqual(['a', 'c', 'b']);
    });
  });

  describe('filters', () => {
    let dave: { id: number; token: string };
    let erin: { id: number; token: string };
    beforeAll(async () => {
      dave = await t.user('dave', { permissions: ['manage_dashboards'] });
      erin = await t.user('erin');
      for (const title of [
        'Web traffic',
        'web errors',
        'Security',
        'Network (ops)',
        'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!',
      ])
        await create(dave.token, { title });
      await create(erin.token, { title: 'Web of erin' });
    });
    const titles = async (qs: string, token = dave.token) => {
      const res = await req(token, 'GET', `/api/dashboards?${qs}`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().results.map((d: { title: string }) => d.title);
    };

    it('filters by exact title', async () => {
      expect(await titles('title=Security')).toEqual(['Security']);
      expect(await titles('title=security')).toEqual([]);
    });

    it('filters by title__iregex: case-insensitive RE2 search, same on every backend', async () => {
      expect(await titles('title__iregex=^web')).toEqual(['Web traffic', 'web errors']);
      expect(await titles(`title__iregex=${encodeURIComponent('\\bops\\b')}`)).toEqual(['Network (ops)']);
      expect(await titles(`title__iregex=${encodeURIComponent('\\(OPS\\)$')}`)).toEqual(['Network (ops)']);
      expect(await titles(`title__iregex=${encodeURIComponent('[[:upper:]]ecurity|TRAFFIC')}`)).toEqual([
        'Web traffic',
        'Security',
      ]);
      expect(await titles('title__iregex=^web&show_all=true&ordering=title')).toEqual([
        'Web of erin',
        'Web traffic',
        'web errors',
      ]);
      // Paging happens after the match.
      const page = (
        await req(dave.token, 'GET', '/api/dashboards?title__iregex=e&page_size=2&page=2')
      ).json();
      expect(page.count).toBe(4);
      expect(page.results).toHaveLength(2);
    });

    it('rejects a bad or unsupported regex with 400; a backtracking bomb runs in linear time', async () => {
      for (const pattern of ['(', '[a-', '(?=x)y', '(a)\\1', '\\u0041']) {
        const res = await req(
          dave.token,
          'GET',
          `/api/dashboards?title__iregex=${encodeURIComponent(pattern)}`,
        );
        expect(res.statusCode, pattern).toBe(400);
        expect(res.json().errors).toHaveProperty('title__iregex');
      }
      // Exponential for a backtracking engine on the 40 a's and "!" title; RE2 is linear.
      const started = performance.now();
      expect(await titles(`title__iregex=${encodeURIComponent('^(a+)+$')}`)).toEqual([]);
      expect(await titles(`title__iregex=${encodeURIComponent('^(a+)+!$')}`)).toEqual([
        'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!',
      ]);
      expect(performance.now() - started).toBeLessThan(1000);
    });

    it('filters by owner (comma list), within what the caller sees', async () => {
      expect(await titles(`owner=${erin.id}`)).toEqual([]);
      expect(await titles(`owner=${erin.id}&show_all=1`)).toEqual(['Web of erin']);
      expect((await titles(`owner=${erin.id},${dave.id}&show_all=yes`)).length).toBe(6);
      expect((await req(dave.token, 'GET', '/api/dashboards?owner=x')).statusCode).toBe(400);
      expect((await req(dave.token, 'GET', '/api/dashboards?show_all=maybe')).statusCode).toBe(400);
    });
  });

  describe('ownership', () => {
    let owner: { id: number; token: string };
    let other: { id: number; token: string };
    let dm: { id: number; token: string };
    let wm: { id: number; token: string };
    let ingest: string;
    let d: { id: number; widgets: WidgetBody[] };
    beforeAll(async () => {
      owner = await t.user('olivia');
      other = await t.user('oscar');
      dm = await t.user('dmitri', { permissions: ['manage_dashboards'] });
      wm = await t.user('wanda', { permissions: ['manage_widgets'] });
      ingest = (await t.rt.services.tokens.create(owner.id, { token_type: 'INGEST' })).secret_key;
      d = await create(owner.token, {
        title: 'Private',
        widgets: [widget('w1'), widget('w2'), widget('w3')],
      });
    });
    const ids = async (token: string, qs = '') =>
      (await req(token, 'GET', `/api/dashboards${qs}`)).json().results.map((x: { id: number }) => x.id);

    it('lists: own only; everyone with show_all for manage_dashboards holders and admins', async () => {
      expect(await ids(owner.token)).toEqual([d.id]);
      expect(await ids(other.token)).toEqual([]);
      expect(await ids(other.token, '?show_all=true')).toEqual([]);
      expect(await ids(dm.token)).toEqual([]);
      expect(await ids(dm.token, '?show_all=true')).toContain(d.id);
      expect(await ids(wm.token, '?show_all=true')).toEqual([]);
      expect(await ids(t.adminToken, '?show_all=true')).toContain(d.id);
      expect(await ids(t.adminToken)).not.toContain(d.id);
    });

    it('hides the dashboard from others (404) on every endpoint', async () => {
      const w = d.widgets[0]!.id;
      const calls: Array<[InjectOptions['method'], string, object?]> = [
        ['GET', `/api/dashboards/${d.id}`],
        ['GET', `/api/dashboards/${d.id}?export=true`],
        ['PATCH', `/api/dashboards/${d.id}`, { title: 'x' }],
        ['PUT', `/api/dashboards/${d.id}`, { title: 'x' }],
        ['POST', `/api/dashboards/${d.id}/widgets`, widget('intruder')],
        ['POST', `/api/dashboards/${d.id}/templates`, { path: 'oscar/x' }],
        ['DELETE', `/api/dashboards/${d.id}/widgets/${w}`],
        ['DELETE', `/api/dashboards/${d.id}/widgets/?widget_id=${w}`],
        ['DELETE', `/api/dashboards/${d.id}/widgets`],
        ['POST', `/api/dashboards?source_id=${d.id}`, {}],
        ['DELETE', `/api/dashboards/${d.id}`],
      ];
      for (const [method, url, body] of calls) {
        for (const token of [other.token, wm.token]) {
          const res = await req(token, method, url, body);
          expect(res.statusCode, `${method} ${url}`).toBe(404);
          expect(res.json().code).toBe('not_found');
        }
        const denied = await req(ingest, method, url, body);
        expect(denied.statusCode, `INGEST ${method} ${url}`).toBe(403);
      }
      for (const [method, url] of [
        ['GET', '/api/dashboards'],
        ['POST', '/api/dashboards'],
        ['GET', '/api/dashboards/templates'],
      ] as const) {
        expect(
          (await req(ingest, method, url, method === 'POST' ? { title: 'x' } : undefined)).statusCode,
        ).toBe(403);
      }
      // Nothing changed.
      const again = (await req(owner.token, 'GET', `/api/dashboards/${d.id}`)).json();
      expect(again.title).toBe('Private');
      expect(again.widgets).toHaveLength(3);
    });

    it('lets manage_dashboards holders read, clone and save it, not change it (403); admins change it', async () => {
      for (const token of [dm.token, t.adminToken]) {
        const got = await req(token, 'GET', `/api/dashboards/${d.id}`);
        expect(got.statusCode).toBe(200);
        expect(got.json().widgets.every((w: WidgetBody) => w.read_only)).toBe(true);
        expect(
          (await req(token, 'PATCH', `/api/widgets/${d.widgets[0]!.id}`, { title: 'mine now' })).statusCode,
        ).toBe(403);
        const clone = await req(token, 'POST', `/api/dashboards?source_id=${d.id}`, {});
        expect(clone.statusCode).toBe(201);
        const saved = await req(token, 'POST', `/api/dashboards/${d.id}/templates`, {
          path: `${token === dm.token ? 'dm' : 'admin'}/private`,
        });
        expect(saved.statusCode).toBe(200);
      }
      // Seeing every dashboard is not changing another's: only its owner and admins do.
      const changes: Array<[InjectOptions['method'], string, object?]> = [
        ['PATCH', `/api/dashboards/${d.id}`, { description: 'by dm' }],
        ['PUT', `/api/dashboards/${d.id}`, { title: 'by dm' }],
        ['POST', `/api/dashboards/${d.id}/widgets`, widget('by dm')],
        ['DELETE', `/api/dashboards/${d.id}/widgets/${d.widgets[0]!.id}`],
        ['DELETE', `/api/dashboards/${d.id}/widgets?widget_id=${d.widgets[0]!.id}`],
        ['DELETE', `/api/dashboards/${d.id}/widgets`],
        ['DELETE', `/api/dashboards/${d.id}`],
      ];
      for (const [method, url, body] of changes) {
        const res = await req(dm.token, method, url, body);
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json().code).toBe('permission_denied');
      }
      const unchanged = (await req(owner.token, 'GET', `/api/dashboards/${d.id}`)).json();
      expect(unchanged).toMatchObject({ title: 'Private', description: '' });
      expect(unchanged.widgets).toHaveLength(3);
      expect(
        (await req(t.adminToken, 'PATCH', `/api/dashboards/${d.id}`, { description: 'by admin' })).statusCode,
      ).toBe(200);
      expect(
        (await req(t.adminToken, 'PUT', `/api/dashboards/${d.id}`, { title: 'Private' })).statusCode,
      ).toBe(200);
      const added = await req(t.adminToken, 'POST', `/api/dashboards/${d.id}/widgets`, widget('by admin'));
      expect(added.statusCode, added.body).toBe(200);
      expect(added.json()).toMatchObject({ read_only: false, dashboards: [d.id] });
      const seenByOwner = (await req(owner.token, 'GET', `/api/dashboards/${d.id}`)).json();
      expect(seenByOwner.widgets.at(-1)).toMatchObject({ id: added.json().id, read_only: true });
      // The owner still sees only the dashboards it can see in a widget's list.
      expect(seenByOwner.widgets[0].dashboards).toEqual([d.id]);
      const detached = await req(
        t.adminToken,
        'DELETE',
        `/api/dashboards/${d.id}/widgets/${added.json().id}`,
      );
      expect(detached.statusCode).toBe(204);
      expect(await widgetExists(added.json().id)).toBe(404);
      const admin = await req(
        t.adminToken,
        'DELETE',
        `/api/dashboards/${d.id}/widgets?widget_id=${d.widgets[2]!.id}`,
      );
      expect(admin.statusCode).toBe(204);
    });

    it('lets the owner do everything, and an admin (not a manage_dashboards holder) delete it', async () => {
      const added = await req(owner.token, 'POST', `/api/dashboards/${d.id}/widgets/`, widget('own'));
      expect(added.statusCode).toBe(200);
      expect(added.json().read_only).toBe(false);
      expect(
        (await req(owner.token, 'POST', `/api/dashboards/${d.id}/templates/`, { path: 'olivia/p' }))
          .statusCode,
      ).toBe(200);
      expect(
        (await req(owner.token, 'DELETE', `/api/dashboards/${d.id}/widgets/${added.json().id}/`)).statusCode,
      ).toBe(204);
      expect((await req(dm.token, 'DELETE', `/api/dashboards/${d.id}`)).statusCode).toBe(403);
      expect((await req(t.adminToken, 'DELETE', `/api/dashboards/${d.id}`)).statusCode).toBe(204);
      expect((await req(owner.token, 'GET', `/api/dashboards/${d.id}`)).statusCode).toBe(404);
    });
  });

  describe('cloning', () => {
    let source: { id: number; title: string; widgets: WidgetBody[] };
    let frank: { id: number; token: string };
    beforeAll(async () => {
      frank = await t.user('frank', { permissions: ['manage_dashboards'] });
      source = await create(alice.token, {
        title: 'Source',
        description: 'to clone',
        widgets: [widget('s1'), widget('s2', { position: { x: 6, y: 0, w: 6, h: 4 } })],
      });
    });

    it('attaches the same widgets read-only; they follow the owner’s later changes', async () => {
      const clone = await create(frank.token, {}, `?source_id=${source.id}`);
      expect(clone).toMatchObject({ title: 'Copy of Source', description: 'to clone', owner: frank.id });
      expect(clone.widgets.map((w: WidgetBody) => w.id)).toEqual(source.widgets.map((w) => w.id));
      expect(clone.widgets.every((w: WidgetBody) => w.read_only && w.owner === alice.id)).toBe(true);
      const w = clone.widgets[0].id;
      // Visible to the cloner (GET ok), but not theirs to change.
      expect((await req(frank.token, 'GET', `/api/widgets/${w}`)).json()).toMatchObject({ read_only: true });
      expect((await req(frank.token, 'PATCH', `/api/widgets/${w}`, { title: 'x' })).statusCode).toBe(403);
      expect((await req(frank.token, 'PUT', `/api/widgets/${w}`, widget('x'))).statusCode).toBe(403);
      expect((await req(frank.token, 'DELETE', `/api/widgets/${w}`)).statusCode).toBe(403);
      // The owner changes it: the clone shows the change.
      const changed = await req(alice.token, 'PATCH', `/api/widgets/${w}`, { title: 's1 renamed' });
      expect(changed.statusCode).toBe(200);
      const after = (await req(frank.token, 'GET', `/api/dashboards/${clone.id}`)).json();
      expect(after.widgets[0].title).toBe('s1 renamed');
      // The owner's view lists only the dashboards the owner can see.
      expect(changed.json().dashboards).toEqual([source.id]);
      expect(after.widgets[0].dashboards).toEqual([source.id, clone.id].sort((a, b) => a - b));
    });

    it('copies the widgets with clone_widgets=true: owned by the cloner and independent', async () => {
      const clone = await create(
        frank.token,
        { title: 'Mine' },
        `?source_id=${source.id}&clone_widgets=true`,
      );
      expect(clone.title).toBe('Mine');
      expect(clone.widgets).toHaveLength(2);
      const origIds = source.widgets.map((w) => w.id);
      for (const [i, w] of (clone.widgets as WidgetBody[]).entries()) {
        expect(origIds).not.toContain(w.id);
        expect(w).toMatchObject({ owner: frank.id, read_only: false, dashboards: [clone.id] });
        expect(w.query).toEqual(source.widgets[i]!.query);
        expect(w.position).toEqual(source.widgets[i]!.position);
      }
      const copy = clone.widgets[1].id;
      expect(
        (await req(frank.token, 'PATCH', `/api/widgets/${copy}`, { title: 'changed copy' })).statusCode,
      ).toBe(200);
      expect((await req(alice.token, 'GET', `/api/widgets/${source.widgets[1]!.id}`)).json().title).toBe(
        's2',
      );
      await req(alice.token, 'PATCH', `/api/widgets/${source.widgets[1]!.id}`, { title: 's2 v2' });
      expect((await req(frank.token, 'GET', `/api/widgets/${copy}`)).json().title).toBe('changed copy');
      expect((await req(frank.token, 'DELETE', `/api/widgets/${copy}`)).statusCode).toBe(204);
      expect(await widgetExists(source.widgets[1]!.id)).toBe(200);
    });

    it('is 404 for a dashboard the caller cannot see or that does not exist; 400 for a bad id', async () => {
      const before = await count('dashboards');
      expect((await req(bob.token, 'POST', `/api/dashboards?source_id=${source.id}`, {})).statusCode).toBe(
        404,
      );
      expect((await req(alice.token, 'POST', '/api/dashboards?source_id=999999', {})).statusCode).toBe(404);
      expect((await req(alice.token, 'POST', '/api/dashboards?source_id=abc', {})).statusCode).toBe(400);
      expect(
        (await req(alice.token, 'POST', `/api/dashboards?source_id=${source.id}&clone_widgets=perhaps`, {}))
          .statusCode,
      ).toBe(400);
      const withWidgets = await req(alice.token, 'POST', `/api/dashboards?source_id=${source.id}`, {
        widgets: [widget('x')],
      });
      expect(withWidgets.statusCode).toBe(400);
      expect(withWidgets.json().errors).toHaveProperty('widgets');
      expect(await count('dashboards')).toBe(before);
    });

    it('clones without a body at all, and cuts an over-long default title', async () => {
      const long = await create(alice.token, { title: 'x'.repeat(200) });
      const res = await t.as(alice.token, { method: 'POST', url: `/api/dashboards?source_id=${long.id}` });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().title).toHaveLength(200);
      expect(res.json().title.startsWith('Copy of x')).toBe(true);
    });
  });

  describe('detaching widgets', () => {
    it('detaches one, a list, or all; a widget left on no dashboard is deleted', async () => {
      const d = await create(alice.token, {
        title: 'Detach',
        widgets: [widget('a'), widget('b'), widget('c'), widget('d'), widget('e')],
      });
      const [a, b, c, dd, e] = d.widgets.map((w: WidgetBody) => w.id);
      const other = await create(alice.token, { title: 'Keeps c', widgets: [c] });
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets/${a}`)).statusCode).toBe(204);
      expect(await widgetExists(a)).toBe(404);
      // A widget not on the dashboard: 404, and nothing is detached.
      const wrong = await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets/?widget_id=${b},${a}`);
      expect(wrong.statusCode).toBe(404);
      expect(await widgetExists(b)).toBe(200);
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets/${a}`)).statusCode).toBe(404);
      expect(
        (await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets?widget_id=x`)).statusCode,
      ).toBe(400);
      expect(
        (await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets/?widget_id=${b},${c}`)).statusCode,
      ).toBe(204);
      expect(await widgetExists(b)).toBe(404);
      // c is still on the other dashboard.
      expect((await req(alice.token, 'GET', `/api/widgets/${c}`)).json().dashboards).toEqual([other.id]);
      expect(
        (await req(alice.token, 'GET', `/api/dashboards/${d.id}`))
          .json()
          .widgets.map((w: WidgetBody) => w.id),
      ).toEqual([dd, e]);
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets/`)).statusCode).toBe(204);
      expect((await req(alice.token, 'GET', `/api/dashboards/${d.id}`)).json().widgets).toEqual([]);
      expect(await widgetExists(dd)).toBe(404);
      expect(await widgetExists(e)).toBe(404);
      // Detaching from an empty dashboard is a no-op.
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${d.id}/widgets`)).statusCode).toBe(204);
    });

    it("detaching someone else's attached widget from your clone leaves it on its own dashboard", async () => {
      const src = await create(alice.token, { title: 'Origin', widgets: [widget('orig')] });
      // bob cannot see alice's dashboard, so cannot clone it.
      expect((await req(bob.token, 'POST', `/api/dashboards?source_id=${src.id}`, {})).statusCode).toBe(404);
      const gina = await t.user('gina', { permissions: ['manage_dashboards'] });
      const mine = await create(gina.token, {}, `?source_id=${src.id}`);
      const w = mine.widgets[0].id;
      expect((await req(gina.token, 'DELETE', `/api/dashboards/${mine.id}/widgets/${w}`)).statusCode).toBe(
        204,
      );
      expect(await widgetExists(w)).toBe(200);
      // Re-attach it by id, then the owner deletes the original dashboard: the widget stays on gina's.
      const relaid = await req(gina.token, 'PATCH', `/api/dashboards/${mine.id}`, { widgets: [w] });
      expect(relaid.statusCode, relaid.body).toBe(200);
      expect((await req(alice.token, 'DELETE', `/api/dashboards/${src.id}`)).statusCode).toBe(204);
      expect((await req(gina.token, 'GET', `/api/widgets/${w}`)).json()).toMatchObject({
        read_only: true,
        dashboards: [mine.id],
      });
    });
  });

  describe('export', () => {
    it('round-trips: the exported form POSTed back makes an equal dashboard', async () => {
      const d = await create(alice.token, {
        title: 'Portable',
        description: 'goes anywhere',
        widgets: [
          widget('t', { visualization: { kind: 'line', options: { stacked: true } }, refresh_interval: 60 }),
          {
            title: 'search',
            description: 'errors',
            query: {
              type: 'Search',
              params: { query: 'severity:error', time_range: { preset: 'last_24_hours' } },
            },
            position: { x: 3, y: 1, w: 9, h: 2 },
          },
        ],
      });
      const exported = await req(alice.token, 'GET', `/api/dashboards/${d.id}?export=true`);
      expect(exported.statusCode).toBe(200);
      const def = exported.json();
      expect(Object.keys(def).sort()).toEqual(['description', 'title', 'widgets']);
      expect(Object.keys(def.widgets[0]).sort()).toEqual(
        ['description', 'position', 'query', 'refresh_interval', 'title', 'visualization'].sort(),
      );
      const copy = await create(bob.token, def);
      expect(copy.owner).toBe(bob.id);
      const again = (await req(bob.token, 'GET', `/api/dashboards/${copy.id}?export=1`)).json();
      expect(again).toEqual(def);
      // In the list too.
      const list = (await req(bob.token, 'GET', `/api/dashboards?export=true&title=Portable`)).json();
      expect(list.results).toEqual([def]);
      // A widget's export POSTed to a dashboard makes an equal widget.
      const wdef = (await req(alice.token, 'GET', `/api/widgets/${d.widgets[1].id}?export=true`)).json();
      expect(wdef).toEqual(def.widgets[1]);
      const w = await req(bob.token, 'POST', `/api/dashboards/${copy.id}/widgets`, wdef);
      expect(w.statusCode, w.body).toBe(200);
      expect((await req(bob.token, 'GET', `/api/widgets/${w.json().id}?export=true`)).json()).toEqual(wdef);
    });
  });

  describe('templates', () => {
    it('saves a template and creates an equal dashboard from it', async () => {
      const d = await create(alice.token, {
        title: 'Team board',
        widgets: [widget('one'), widget('two', { visualization: { kind: 'bar' } })],
      });
      const saved = await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, {
        path: 'team/web-overview',
      });
      expect(saved.statusCode, saved.body).toBe(200);
      expect(saved.json()).toEqual({ path: 'team/web-overview' });
      const list = (await req(bob.token, 'GET', '/api/dashboards/templates/')).json();
      expect(list.results).toContainEqual({ path: 'team/web-overview', title: 'Team board', builtin: false });
      expect(
        list.results.filter((x: { builtin: boolean }) => x.builtin).map((x: { path: string }) => x.path),
      ).toEqual(['builtin/overview', 'builtin/security', 'builtin/web-traffic']);
      const fromIt = await create(bob.token, { template: 'team/web-overview' });
      expect(fromIt).toMatchObject({ title: 'Team board', owner: bob.id });
      const a = (await req(alice.token, 'GET', `/api/dashboards/${d.id}?export=true`)).json();
      const b = (await req(bob.token, 'GET', `/api/dashboards/${fromIt.id}?export=true`)).json();
      expect(b).toEqual(a);
      expect(fromIt.widgets.every((w: WidgetBody) => w.owner === bob.id && !w.read_only)).toBe(true);
      // The title may be overridden.
      expect((await create(bob.token, { template: 'team/web-overview', title: 'Renamed' })).title).toBe(
        'Renamed',
      );
      // The owner overwrites; someone else gets 409; an admin may overwrite.
      await req(alice.token, 'PATCH', `/api/dashboards/${d.id}`, { title: 'Team board v2' });
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path: 'team/web-overview' }))
          .statusCode,
      ).toBe(200);
      const bobs = await create(bob.token, { title: 'bob board' });
      const taken = await req(bob.token, 'POST', `/api/dashboards/${bobs.id}/templates`, {
        path: 'team/web-overview',
      });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().code).toBe('conflict');
      expect((await create(bob.token, { template: 'team/web-overview' })).title).toBe('Team board v2');
      const adminBoard = await create(t.adminToken, { title: 'Admin board' });
      expect(
        (
          await req(t.adminToken, 'POST', `/api/dashboards/${adminBoard.id}/templates`, {
            path: 'team/web-overview',
          })
        ).statusCode,
      ).toBe(200);
      expect((await create(bob.token, { template: 'team/web-overview' })).title).toBe('Admin board');
      // The template keeps its owner: alice may still overwrite it.
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path: 'team/web-overview' }))
          .statusCode,
      ).toBe(200);
      const paths = (await req(bob.token, 'GET', '/api/dashboards/templates?ordering=-title')).json().results;
      expect(paths.map((p: { title: string }) => p.title)).toEqual(
        [...paths.map((p: { title: string }) => p.title)].sort().reverse(),
      );
    });

    it('rejects bad template paths with 400 and writes nothing', async () => {
      const d = await create(alice.token, { title: 'Paths' });
      const before = await count('dashboard_templates');
      const bad = [
        '../etc/passwd',
        'a/../b',
        'a/..',
        '..',
        '/absolute',
        'x'.repeat(201),
        '',
        'has space',
        'a//b',
        'trailing/',
        './x',
        'ünïcode',
        'builtin/overview',
        'builtin/mine',
        'builtin',
      ];
      for (const path of bad) {
        const res = await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path });
        expect(res.statusCode, path).toBe(400);
        expect(res.json().errors, path).toHaveProperty('path');
      }
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path: 'ok', x: 1 }))
          .statusCode,
      ).toBe(400);
      expect((await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, {})).statusCode).toBe(400);
      expect(await count('dashboard_templates')).toBe(before);
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path: 'x'.repeat(200) }))
          .statusCode,
      ).toBe(200);
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/templates`, { path: 'A-z_0.9/v1.2/x' }))
          .statusCode,
      ).toBe(200);
    });

    it('creating from an unknown or malformed template path is 400', async () => {
      const before = await count('dashboards');
      for (const template of ['nope/missing', '../x', '/abs', 'builtin/nothing']) {
        const res = await req(alice.token, 'POST', '/api/dashboards', { template });
        expect(res.statusCode, template).toBe(400);
        expect(res.json().errors).toHaveProperty('template');
      }
      const both = await req(alice.token, 'POST', '/api/dashboards', {
        template: 'builtin/overview',
        widgets: [widget('x')],
      });
      expect(both.statusCode).toBe(400);
      expect(await count('dashboards')).toBe(before);
    });
  });

  describe('built-in templates', () => {
    beforeAll(async () => {
      // A day of demo events ending now, through the real ingest path (normalisation).
      const gen = demoGenerator(7);
      const now = Date.now();
      const entries = Array.from({ length: 3000 }, (_, index) => ({
        index,
        value: gen.next(now - 60_000 - index * 25_000),
      }));
      const out = await t.rt.services.ingest.ingest(entries, 'http:test');
      expect(out.rejected).toBe(0);
    });

    it.each(Object.keys(BUILTIN_TEMPLATES))(
      '%s makes a dashboard whose widget queries run and find data',
      async (path) => {
        const d = await create(alice.token, { template: path });
        expect(d.title).toBe(BUILTIN_TEMPLATES[path]!.title);
        expect(d.widgets.length).toBe(BUILTIN_TEMPLATES[path]!.widgets.length);
        for (const w of d.widgets as WidgetBody[]) {
          expect(w.query.params.time_range).toEqual({ preset: 'last_24_hours' });
          const res = await req(alice.token, 'POST', '/api/query', w.query);
          expect([200, 202], `${w.title}: ${res.body}`).toContain(res.statusCode);
          let q = res.json();
          for (let i = 0; i < 100 && q.status !== 'SUCCESS' && q.status !== 'ERROR'; i++) {
            await new Promise((r) => setTimeout(r, 50));
            q = (await req(alice.token, 'GET', `/api/query/${q.query_id}`)).json();
          }
          expect(q.status, `${w.title}: ${q.error}`).toBe('SUCCESS');
          const r = q.results;
          const found =
            w.query.type === 'Timeline'
              ? r.buckets.reduce((n: number, b: { count: number }) => n + b.count, 0)
              : w.query.type === 'Summary'
                ? r.totals.count
                : r.total;
          expect(found, w.title).toBeGreaterThan(0);
        }
      },
    );
  });

  describe('for reports and live updates', () => {
    it('gives a visible dashboard’s widgets to reports and subscriptions, 404 otherwise', async () => {
      const d = await create(alice.token, {
        title: 'Live',
        widgets: [widget('a', { refresh_interval: 5 }), widget('b')],
      });
      const who = async (token: string) => t.rt.services.tokens.authenticate(token);
      const svc = t.rt.services.dashboards;
      const report = await svc.reportable(await who(alice.token), d.id);
      expect(report.title).toBe('Live');
      expect(report.widgets.map((w) => w.title)).toEqual(['a', 'b']);
      const live = await svc.liveWidgets(await who(alice.token), { dashboard_id: d.id });
      expect(live).toEqual([
        { widgetId: d.widgets[0].id, query: d.widgets[0].query, refreshMs: 5000, geo: false },
        { widgetId: d.widgets[1].id, query: d.widgets[1].query, refreshMs: null, geo: false },
      ]);
      const one = await svc.liveWidgets(await who(alice.token), { widget_id: d.widgets[1].id });
      expect(one.map((w) => w.widgetId)).toEqual([d.widgets[1].id]);
      const bobWho = await who(bob.token);
      await expect(svc.reportable(bobWho, d.id)).rejects.toMatchObject({ status: 404 });
      await expect(svc.liveWidgets(bobWho, { dashboard_id: d.id })).rejects.toMatchObject({ status: 404 });
      await expect(svc.liveWidgets(bobWho, { widget_id: d.widgets[0].id })).rejects.toMatchObject({
        status: 404,
      });
    });
  });

  describe('bad input', () => {
    it('rejects unknown fields and wrong types, naming them, writing nothing', async () => {
      const before = [await count('dashboards'), await count('widgets')];
      const cases: Array<[object, string]> = [
        [{ title: 'x', bogus: 1 }, 'bogus'],
        [{ description: 'no title' }, 'title'],
        [{ title: '' }, 'title'],
        [{ title: 'x'.repeat(201) }, 'title'],
        [{ title: 5 }, 'title'],
        [{ title: 'x', widgets: 'nope' }, 'widgets'],
        [{ title: 'x', widgets: [{ title: 'w', query: topHosts, extra: true }] }, 'widgets.0'],
        [
          { title: 'x', widgets: [{ title: 'w', query: topHosts, visualization: { kind: 'radar' } }] },
          'widgets.0',
        ],
        [
          { title: 'x', widgets: [{ title: 'w', query: topHosts, position: { x: -1, y: 0, w: 1, h: 1 } }] },
          'widgets.0',
        ],
        [{ title: 'x', widgets: [{ title: 'w', query: topHosts, refresh_interval: 0 }] }, 'widgets.0'],
        [{ title: 'x', widgets: [999_999] }, 'widgets.0'],
      ];
      for (const [payload, field] of cases) {
        const res = await req(alice.token, 'POST', '/api/dashboards', payload);
        expect(res.statusCode, JSON.stringify(payload)).toBe(400);
        expect(res.json().code).toBe('invalid');
        expect(
          Object.keys(res.json().errors).some((k) => k === field || k.startsWith(`${field}.`)),
          `${JSON.stringify(payload)} → ${res.body}`,
        ).toBe(true);
      }
      expect([await count('dashboards'), await count('widgets')]).toEqual(before);
    });

    it('rejects a widget whose query fails validation (errors under query.), nothing half-made', async () => {
      const before = [await count('dashboards'), await count('widgets'), await count('dashboard_widgets')];
      const bad = await req(alice.token, 'POST', '/api/dashboards', {
        title: 'half',
        widgets: [widget('ok'), { title: 'bad', query: { type: 'TopN', params: { n: 5 } } }],
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().errors).toHaveProperty(['widgets.1.query.params.field']);
      const unknownType = await req(alice.token, 'POST', '/api/dashboards', {
        title: 'half',
        widgets: [{ title: 'bad', query: { type: 'Nope' } }],
      });
      expect(unknownType.json().errors).toHaveProperty(['widgets.0.query.type']);
      const syntax = await req(alice.token, 'POST', '/api/dashboards', {
        title: 'half',
        widgets: [{ title: 'bad', query: { type: 'Search', params: { query: 'a AND (' } } }],
      });
      expect(syntax.statusCode).toBe(400);
      expect(syntax.json().errors).toHaveProperty(['widgets.0.query.params.query']);
      const d = await create(alice.token, { title: 'target' });
      const added = await req(alice.token, 'POST', `/api/dashboards/${d.id}/widgets`, {
        title: 'bad',
        query: { type: 'Timeline', params: { filter: [['status', 'nope', 1]] } },
      });
      expect(added.statusCode).toBe(400);
      expect(Object.keys(added.json().errors)[0]).toMatch(/^query\.params\.filter/);
      expect([await count('dashboards'), await count('widgets'), await count('dashboard_widgets')]).toEqual([
        before[0]! + 1,
        before[1],
        before[2],
      ]);
    });

    it('rolls back every row when a write fails part-way', async () => {
      const before = [await count('dashboards'), await count('widgets'), await count('dashboard_widgets')];
      const spy = vi
        .spyOn(DashboardsRepository.prototype, 'setLayout')
        .mockRejectedValueOnce(new Error('simulated failure'));
      try {
        const res = await req(alice.token, 'POST', '/api/dashboards', {
          title: 'doomed',
          widgets: [widget('a'), widget('b')],
        });
        expect(res.statusCode).toBe(500);
        expect(res.body).not.toContain('simulated failure');
      } finally {
        spy.mockRestore();
      }
      expect([await count('dashboards'), await count('widgets'), await count('dashboard_widgets')]).toEqual(
        before,
      );
    });

    it('rejects a repeated widget id and bad path ids', async () => {
      const d = await create(alice.token, { title: 'dups', widgets: [widget('a')] });
      const id = d.widgets[0].id;
      const dup = await req(alice.token, 'PUT', `/api/dashboards/${d.id}`, {
        title: 'dups',
        widgets: [id, id],
      });
      expect(dup.statusCode).toBe(400);
      expect((await req(alice.token, 'GET', '/api/dashboards/abc')).statusCode).toBe(400);
      expect((await req(alice.token, 'GET', '/api/dashboards/0')).statusCode).toBe(400);
      // Ids beyond the stores' 32-bit range are refused up front (not a database error).
      for (const url of [
        '/api/dashboards/99999999999',
        '/api/dashboards?owner=99999999999',
        `/api/dashboards/${d.id}/widgets/99999999999`,
      ]) {
        const method = url.includes('/widgets/') ? 'DELETE' : 'GET';
        expect((await req(alice.token, method, url)).statusCode, url).toBe(400);
      }
      expect((await req(alice.token, 'POST', '/api/dashboards?source_id=99999999999', {})).statusCode).toBe(
        400,
      );
      expect((await req(alice.token, 'PATCH', `/api/dashboards/${d.id}`, { owner: 5 })).statusCode).toBe(400);
      expect(
        (await req(alice.token, 'POST', `/api/dashboards/${d.id}/widgets`, { title: 'no query' })).statusCode,
      ).toBe(400);
      const noAuth = await t.as(null, { method: 'GET', url: '/api/dashboards' });
      expect(noAuth.statusCode).toBe(401);
      const text = await t.as(alice.token, {
        method: 'POST',
        url: '/api/dashboards',
        headers: { 'content-type': 'text/plain' },
        payload: 'title=x',
      });
      expect(text.statusCode).toBe(415);
    });
  });
});
