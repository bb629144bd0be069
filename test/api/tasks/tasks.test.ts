import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };
interface TaskBody {
  id: number;
  title: string;
  owner: number;
  assigned_to: number | null;
  is_open: boolean;
  due_date: string | null;
  is_overdue: boolean;
  priority: string;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
}

const DAY = 86_400_000;
const isoIn = (ms: number) => new Date(Date.now() + ms).toISOString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const idsOf = (res: LightMyRequestResponse) => res.json().results.map((r: TaskBody) => r.id);

describe(`tasks on ${BACKEND}`, () => {
  let t: TestApp;
  let alice: Who;
  let bob: Who;
  let carol: Who;
  let dave: Who;
  let ingestToken: string;

  const post = (token: string, payload: InjectOptions['payload']) =>
    t.as(token, { method: 'POST', url: '/api/tasks', payload });
  const get = (url: string, token = t.adminToken) => t.as(token, { method: 'GET', url });
  const send = (token: string, method: 'PATCH' | 'PUT', id: number, payload: InjectOptions['payload']) =>
    t.as(token, { method, url: `/api/tasks/${id}`, payload });
  const remove = (token: string, id: number) => t.as(token, { method: 'DELETE', url: `/api/tasks/${id}` });
  const create = async (token: string, payload: Record<string, unknown>): Promise<TaskBody> => {
    const res = await post(token, payload);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  };
  const count = async () => (await t.rt.meta.db.selectFrom('tasks').select('id').execute()).length;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
    carol = await t.user('carol', { permissions: ['manage_tasks'] });
    dave = await t.user('dave');
    ingestToken = (await t.rt.services.tokens.create(alice.id, { token_type: 'INGEST' })).secret_key;
  });
  afterAll(() => t.close());

  describe('create, read, update, delete', () => {
    it('takes assigned_to as an id or a username in bodies, as the filter does; answers with the id', async () => {
      const byName = await create(alice.token, { title: 'named', assigned_to: 'bob' });
      expect(byName.assigned_to).toBe(bob.id);
      const patched = await send(alice.token, 'PATCH', byName.id, { assigned_to: 'carol' });
      expect(patched.json().assigned_to).toBe(carol.id);
      const form = await t.as(alice.token, {
        method: 'PATCH',
        url: `/api/tasks/${byName.id}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `assigned_to=${dave.id}`,
      });
      expect(form.json().assigned_to).toBe(dave.id);
      const unknown = await post(alice.token, { title: 'nobody', assigned_to: 'no_such_user' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().errors).toEqual({ assigned_to: ['User "no_such_user" does not exist.'] });
      const wrongType = await post(alice.token, { title: 'bad', assigned_to: true });
      expect(wrongType.json().errors).toEqual({ assigned_to: ['Must be an integer, a string or null.'] });
      await remove(alice.token, byName.id);
    });

    it('creates a task with defaults, owned by the caller, answering 200', async () => {
      const res = await post(alice.token, { title: 'Check the disk alerts' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const task = res.json();
      expect(task).toEqual({
        id: expect.any(Number),
        title: 'Check the disk alerts',
        description: '',
        owner: alice.id,
        assigned_to: null,
        is_open: true,
        due_date: null,
        is_overdue: false,
        priority: 'medium',
        ev_ids: [],
        trigger_id: null,
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        updated_at: task.created_at,
        closed_at: null,
      });
      // Everyone sees every task, with and without a trailing slash.
      for (const url of [`/api/tasks/${task.id}`, `/api/tasks/${task.id}/`]) {
        const read = await get(url, bob.token);
        expect(read.statusCode).toBe(200);
        expect(read.json()).toEqual(task);
      }
      const viaSlash = await t.as(bob.token, { method: 'POST', url: '/api/tasks/', payload: { title: 'x' } });
      expect(viaSlash.statusCode).toBe(200);
      expect(viaSlash.json().owner).toBe(bob.id);
    });

    it('creates a task with every writable field', async () => {
      const task = await create(alice.token, {
        title: 'Investigate 500s',
        description: 'Spike on the web tier',
        assigned_to: dave.id,
        is_open: true,
        due_date: '2030-01-02T10:30:00+02:00',
        priority: 'critical',
        ev_ids: ['01JABCDEF', '01JXYZ', '01JABCDEF'],
      });
      expect(task).toMatchObject({
        description: 'Spike on the web tier',
        assigned_to: dave.id,
        due_date: '2030-01-02T08:30:00.000Z',
        is_overdue: false,
        priority: 'critical',
        ev_ids: ['01JABCDEF', '01JXYZ'],
      });
    });

    it('reads due dates as dates or date-times and stores them as ISO UTC', async () => {
      const cases: Array<[string | null, string | null]> = [
        ['2031-03-04', '2031-03-04T00:00:00.000Z'],
        ['2031-03-04T05:06:07Z', '2031-03-04T05:06:07.000Z'],
        ['2031-03-04T05:06:07.123456Z', '2031-03-04T05:06:07.123Z'],
        ['2031-03-04T05:06', '2031-03-04T05:06:00.000Z'],
        ['2031-03-04T00:30:00-01:00', '2031-03-04T01:30:00.000Z'],
        ['2032-02-29', '2032-02-29T00:00:00.000Z'],
        [null, null],
        ['', null],
      ];
      for (const [input, stored] of cases) {
        const task = await create(alice.token, { title: 'due', due_date: input });
        expect(task.due_date, String(input)).toBe(stored);
      }
    });

    it('PATCH changes only the given fields and moves updated_at', async () => {
      const task = await create(alice.token, {
        title: 'Rotate keys',
        description: 'all of them',
        priority: 'high',
        due_date: '2030-05-01',
        ev_ids: ['a'],
      });
      await sleep(5);
      const res = await send(alice.token, 'PATCH', task.id, { priority: 'low', assigned_to: bob.id });
      expect(res.statusCode, res.body).toBe(200);
      const patched = res.json();
      expect(patched).toMatchObject({
        title: 'Rotate keys',
        description: 'all of them',
        priority: 'low',
        assigned_to: bob.id,
        due_date: '2030-05-01T00:00:00.000Z',
        ev_ids: ['a'],
        created_at: task.created_at,
      });
      expect(patched.updated_at > task.updated_at).toBe(true);
      expect((await get(`/api/tasks/${task.id}`)).json()).toEqual(patched);
      const cleared = (
        await send(alice.token, 'PATCH', task.id, { assigned_to: null, due_date: null })
      ).json();
      expect(cleared).toMatchObject({ assigned_to: null, due_date: null, priority: 'low' });
    });

    it('PUT replaces every writable field, resetting omitted ones to defaults', async () => {
      const task = await create(alice.token, {
        title: 'Old',
        description: 'old',
        priority: 'high',
        assigned_to: bob.id,
        due_date: '2030-05-01',
        ev_ids: ['a', 'b'],
        is_open: false,
      });
      const res = await send(alice.token, 'PUT', task.id, { title: 'New', ev_ids: ['c'] });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        id: task.id,
        title: 'New',
        description: '',
        priority: 'medium',
        assigned_to: null,
        due_date: null,
        ev_ids: ['c'],
        is_open: true,
        closed_at: null,
        owner: alice.id,
        created_at: task.created_at,
      });
      const missingTitle = await send(alice.token, 'PUT', task.id, { description: 'x' });
      expect(missingTitle.statusCode).toBe(400);
      expect(missingTitle.json().errors).toHaveProperty('title');
    });

    it('sets closed_at on closing, keeps it while closed, clears it on reopening', async () => {
      const task = await create(alice.token, { title: 'Close me' });
      expect(task.closed_at).toBeNull();
      const closed = (await send(alice.token, 'PATCH', task.id, { is_open: false })).json();
      expect(closed.is_open).toBe(false);
      expect(closed.closed_at).toMatch(/Z$/);
      await sleep(5);
      const again = (await send(alice.token, 'PATCH', task.id, { is_open: false })).json();
      expect(again.closed_at).toBe(closed.closed_at);
      const edited = (await send(alice.token, 'PATCH', task.id, { title: 'Closed and renamed' })).json();
      expect(edited.closed_at).toBe(closed.closed_at);
      const reopened = (await send(alice.token, 'PATCH', task.id, { is_open: true })).json();
      expect(reopened).toMatchObject({ is_open: true, closed_at: null });
      const closedAtBirth = await create(alice.token, { title: 'Born closed', is_open: false });
      expect(closedAtBirth.closed_at).toBe(closedAtBirth.created_at);
      const putClosed = (
        await send(alice.token, 'PUT', closedAtBirth.id, { title: 'x', is_open: false })
      ).json();
      expect(putClosed.closed_at).toBe(closedAtBirth.closed_at);
    });

    it('computes is_overdue when read: open and due in the past', async () => {
      const past = await create(alice.token, { title: 'late', due_date: isoIn(-DAY) });
      expect(past.is_overdue).toBe(true);
      const future = await create(alice.token, { title: 'early', due_date: isoIn(DAY) });
      expect(future.is_overdue).toBe(false);
      const soon = await create(alice.token, { title: 'soon', due_date: isoIn(400) });
      expect(soon.is_overdue).toBe(false);
      // The clock moves past the due date without the test waiting for it.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 500 });
      try {
        expect((await get(`/api/tasks/${soon.id}`)).json().is_overdue).toBe(true);
      } finally {
        vi.useRealTimers();
      }
      const closed = (await send(alice.token, 'PATCH', past.id, { is_open: false })).json();
      expect(closed.is_overdue).toBe(false);
    });

    it('deletes a task: 204, then 404', async () => {
      const task = await create(alice.token, { title: 'Delete me' });
      const res = await remove(alice.token, task.id);
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect((await get(`/api/tasks/${task.id}`)).statusCode).toBe(404);
      expect((await remove(alice.token, task.id)).statusCode).toBe(404);
    });

    it('answers 404 for unknown ids and 400 for ids that are not positive integers', async () => {
      for (const [method, payload] of [
        ['GET', undefined],
        ['PATCH', { title: 'x' }],
        ['PUT', { title: 'x' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await t.as(t.adminToken, {
          method,
          url: '/api/tasks/999999',
          ...(payload ? { payload } : {}),
        });
        expect(res.statusCode, method).toBe(404);
        expect(res.json().code).toBe('not_found');
      }
      for (const id of ['abc', '0', '-1', '1.5']) {
        expect((await get(`/api/tasks/${id}`)).statusCode, id).toBe(400);
      }
    });

    it('creates from urlencoded and multipart bodies, nested ev_ids as JSON text', async () => {
      const form = await t.as(alice.token, {
        method: 'POST',
        url: '/api/tasks',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          title: 'From a form',
          assigned_to: String(bob.id),
          is_open: 'false',
          due_date: '2030-07-08',
          priority: 'high',
          ev_ids: JSON.stringify(['e1', 'e2']),
        }).toString(),
      });
      expect(form.statusCode, form.body).toBe(200);
      expect(form.json()).toMatchObject({
        title: 'From a form',
        assigned_to: bob.id,
        is_open: false,
        due_date: '2030-07-08T00:00:00.000Z',
        priority: 'high',
        ev_ids: ['e1', 'e2'],
      });
      const fd = new FormData();
      fd.append('title', 'From multipart');
      fd.append('assigned_to', '');
      fd.append('due_date', '');
      fd.append('ev_ids', '["m1"]');
      const multi = await t.as(alice.token, { method: 'POST', url: '/api/tasks', payload: fd });
      expect(multi.statusCode, multi.body).toBe(200);
      expect(multi.json()).toMatchObject({
        title: 'From multipart',
        assigned_to: null,
        due_date: null,
        ev_ids: ['m1'],
        is_open: true,
      });
      const patchForm = await t.as(alice.token, {
        method: 'PATCH',
        url: `/api/tasks/${multi.json().id}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'is_open=no&priority=low',
      });
      expect(patchForm.statusCode, patchForm.body).toBe(200);
      expect(patchForm.json()).toMatchObject({ is_open: false, priority: 'low' });
      const badJson = await t.as(alice.token, {
        method: 'POST',
        url: '/api/tasks',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'title=x&ev_ids=%5Bnope',
      });
      expect(badJson.statusCode).toBe(400);
      expect(badJson.json().errors).toHaveProperty('ev_ids');
    });
  });

  describe('who may change and delete', () => {
    type Actor = 'owner' | 'assignee' | 'other' | 'manager' | 'admin' | 'ingest';
    const token = (a: Actor) =>
      ({
        owner: alice.token,
        assignee: dave.token,
        other: bob.token,
        manager: carol.token,
        admin: t.adminToken,
        ingest: ingestToken,
      })[a];
    const fresh = () => create(alice.token, { title: 'Matrix', assigned_to: dave.id });

    const changeRules: Array<[Actor, number]> = [
      ['owner', 200],
      ['assignee', 200],
      ['manager', 200],
      ['admin', 200],
      ['other', 403],
      ['ingest', 403],
    ];
    it.each(changeRules)('PATCH and PUT by %s → %i', async (actor, status) => {
      const task = await fresh();
      const patch = await send(token(actor), 'PATCH', task.id, { priority: 'high' });
      expect(patch.statusCode, patch.body).toBe(status);
      const put = await send(token(actor), 'PUT', task.id, { title: `by ${actor}`, assigned_to: dave.id });
      expect(put.statusCode, put.body).toBe(status);
      const now = (await get(`/api/tasks/${task.id}`)).json();
      if (status === 200) expect(now.title).toBe(`by ${actor}`);
      else {
        expect(now).toEqual(task);
        expect(patch.json().code).toBe('permission_denied');
      }
    });

    const deleteRules: Array<[Actor, number]> = [
      ['owner', 204],
      ['admin', 204],
      ['assignee', 403],
      ['manager', 403],
      ['other', 403],
      ['ingest', 403],
    ];
    it.each(deleteRules)('DELETE by %s → %i', async (actor, status) => {
      const task = await fresh();
      const res = await remove(token(actor), task.id);
      expect(res.statusCode, res.body).toBe(status);
      expect((await get(`/api/tasks/${task.id}`)).statusCode).toBe(status === 204 ? 404 : 200);
    });

    it('an assignee loses the right when reassigned', async () => {
      const task = await fresh();
      expect((await send(dave.token, 'PATCH', task.id, { assigned_to: bob.id })).statusCode).toBe(200);
      expect((await send(dave.token, 'PATCH', task.id, { title: 'mine again?' })).statusCode).toBe(403);
      expect((await send(bob.token, 'PATCH', task.id, { title: 'bob now' })).statusCode).toBe(200);
    });

    it('refuses INGEST tokens and anonymous callers everywhere', async () => {
      expect((await get('/api/tasks', ingestToken)).statusCode).toBe(403);
      expect((await post(ingestToken, { title: 'x' })).statusCode).toBe(403);
      const task = await fresh();
      expect((await get(`/api/tasks/${task.id}`, ingestToken)).statusCode).toBe(403);
      expect((await t.app.inject({ method: 'GET', url: '/api/tasks' })).statusCode).toBe(401);
      expect(
        (await t.app.inject({ method: 'POST', url: '/api/tasks', payload: { title: 'x' } })).statusCode,
      ).toBe(401);
    });

    it('deleting a user deletes their tasks and unassigns them elsewhere', async () => {
      const erin = await t.user('erin');
      const owned = await create(erin.token, { title: "erin's" });
      const assigned = await create(alice.token, { title: 'for erin', assigned_to: erin.id });
      expect((await t.as(t.adminToken, { method: 'DELETE', url: `/api/users/${erin.id}` })).statusCode).toBe(
        204,
      );
      expect((await get(`/api/tasks/${owned.id}`)).statusCode).toBe(404);
      expect((await get(`/api/tasks/${assigned.id}`)).json().assigned_to).toBeNull();
    });
  });

  describe('bad input', () => {
    const badCreates: Array<[string, Record<string, unknown>, string]> = [
      ['no title', {}, 'title'],
      ['an empty title', { title: '' }, 'title'],
      ['a blank title', { title: '   ' }, 'title'],
      ['a title too long', { title: 'x'.repeat(201) }, 'title'],
      ['a title of the wrong type', { title: 5 }, 'title'],
      ['due_date not a date', { title: 'x', due_date: 'tomorrow' }, 'due_date'],
      ['due_date as a number', { title: 'x', due_date: 1767225600 }, 'due_date'],
      ['due_date on Feb 30', { title: 'x', due_date: '2030-02-30' }, 'due_date'],
      ['due_date at 24:00', { title: 'x', due_date: '2030-01-01T24:00:00Z' }, 'due_date'],
      ['due_date in month 13', { title: 'x', due_date: '2030-13-01' }, 'due_date'],
      ['due_date with junk', { title: 'x', due_date: '2030-01-01junk' }, 'due_date'],
      ['an unknown priority', { title: 'x', priority: 'urgent' }, 'priority'],
      ['an unknown field', { title: 'x', colour: 'red' }, 'colour'],
      ['a read-only field', { title: 'x', owner: 2 }, 'owner'],
      ['is_open as text', { title: 'x', is_open: 'yes' }, 'is_open'],
      ['assigned_to as an unknown username', { title: 'x', assigned_to: 'nobody_here' }, 'assigned_to'],
      ['assigned_to an unknown user', { title: 'x', assigned_to: 424242 }, 'assigned_to'],
      ['ev_ids not an array', { title: 'x', ev_ids: 'abc' }, 'ev_ids'],
      ['an ev_id not a string', { title: 'x', ev_ids: [1] }, 'ev_ids.0'],
      ['an ev_id too long', { title: 'x', ev_ids: ['e'.repeat(65)] }, 'ev_ids.0'],
      ['too many ev_ids', { title: 'x', ev_ids: Array.from({ length: 1001 }, (_, i) => `e${i}`) }, 'ev_ids'],
      ['description not a string', { title: 'x', description: ['a'] }, 'description'],
    ];
    it.each(badCreates)(
      'POST with %s → 400 naming the field, nothing written',
      async (_name, payload, field) => {
        const before = await count();
        const res = await post(alice.token, payload);
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().code).toBe('invalid');
        expect(Object.keys(res.json().errors)).toContain(field);
        expect(await count()).toBe(before);
      },
    );

    it('reports several service-level problems at once', async () => {
      const res = await post(alice.token, { title: ' ', due_date: 'soon', assigned_to: 424242 });
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json().errors).sort()).toEqual(['assigned_to', 'due_date', 'title']);
    });

    it('PATCH and PUT with bad input change nothing', async () => {
      const task = await create(alice.token, { title: 'Stable', priority: 'high', due_date: '2030-01-01' });
      for (const [method, payload, field] of [
        ['PATCH', { due_date: 'not a date' }, 'due_date'],
        ['PATCH', { priority: 'urgent' }, 'priority'],
        ['PATCH', { assigned_to: 424242 }, 'assigned_to'],
        ['PATCH', { id: 5 }, 'id'],
        ['PATCH', { title: null }, 'title'],
        ['PATCH', { is_open: 1 }, 'is_open'],
        ['PUT', { title: 'Changed', due_date: '2030-02-30' }, 'due_date'],
        ['PUT', { title: 'Changed', assigned_to: 424242 }, 'assigned_to'],
        ['PUT', { title: 'Changed', created_at: '2020-01-01T00:00:00Z' }, 'created_at'],
      ] as const) {
        const res = await send(alice.token, method, task.id, payload);
        expect(res.statusCode, `${method} ${JSON.stringify(payload)}`).toBe(400);
        expect(Object.keys(res.json().errors)).toContain(field);
      }
      expect((await get(`/api/tasks/${task.id}`)).json()).toEqual(task);
    });

    it('415 for other media types and 400 for malformed JSON', async () => {
      const text = await t.as(alice.token, {
        method: 'POST',
        url: '/api/tasks',
        headers: { 'content-type': 'text/plain' },
        payload: 'title=x',
      });
      expect(text.statusCode).toBe(415);
      const malformed = await t.as(alice.token, {
        method: 'POST',
        url: '/api/tasks',
        headers: { 'content-type': 'application/json' },
        payload: '{"title": ',
      });
      expect(malformed.statusCode).toBe(400);
    });
  });
});

describe(`task lists on ${BACKEND}`, () => {
  let t: TestApp;
  let alice: Who;
  let bob: Who;
  let carol: Who;
  /** Task ids by name. */
  const ids: Record<string, number> = {};

  const list = async (query: string) => {
    const res = await t.as(bob.token, { method: 'GET', url: `/api/tasks?${query}` });
    expect(res.statusCode, `${query}: ${res.body}`).toBe(200);
    return res;
  };
  const names = (res: LightMyRequestResponse) => {
    const byId = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    return idsOf(res).map((id: number) => byId[id]);
  };
  const sorted = (res: LightMyRequestResponse) => names(res).sort();

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
    // A username made of digits: assigned_to=<digits> matches it as well as the id.
    carol = await t.user('1');
    const specs: Array<[string, string, Record<string, unknown>]> = [
      [
        'a',
        alice.token,
        { title: 'Disk full on DB-1', priority: 'high', assigned_to: bob.id, due_date: isoIn(-DAY) },
      ],
      ['b', alice.token, { title: 'disk latency', priority: 'low', due_date: isoIn(DAY) }],
      ['c', bob.token, { title: '100% CPU_load', priority: 'critical', assigned_to: alice.id }],
      [
        'd',
        bob.token,
        { title: 'Rotate logs', priority: 'medium', is_open: false, due_date: isoIn(-2 * DAY) },
      ],
      [
        'e',
        carol.token,
        { title: '100 percent sure', priority: 'low', assigned_to: carol.id, due_date: isoIn(2 * DAY) },
      ],
      ['f', t.adminToken, { title: 'Überprüfung', priority: 'critical', due_date: isoIn(-3 * DAY) }],
    ];
    for (const [name, token, payload] of specs) {
      const res = await t.as(token, { method: 'POST', url: '/api/tasks', payload });
      expect(res.statusCode, res.body).toBe(200);
      ids[name] = res.json().id;
    }
  });
  afterAll(() => t.close());

  it('lists every task to every user in the envelope', async () => {
    const res = await list('');
    expect(res.json()).toMatchObject({ count: 6, next: null, previous: null });
    expect(names(res)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect((await t.as(carol.token, { method: 'GET', url: '/api/tasks/' })).json().count).toBe(6);
  });

  it('filters by owner, one id or comma-separated', async () => {
    expect(sorted(await list(`owner=${alice.id}`))).toEqual(['a', 'b']);
    expect(sorted(await list(`owner=${alice.id},${carol.id}`))).toEqual(['a', 'b', 'e']);
    expect(sorted(await list('owner=99999'))).toEqual([]);
    const bad = await t.as(bob.token, { method: 'GET', url: '/api/tasks?owner=alice' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().errors).toHaveProperty('owner');
  });

  it('filters by assigned_to: ids, usernames, mixed and comma-separated', async () => {
    expect(sorted(await list(`assigned_to=${bob.id}`))).toEqual(['a']);
    expect(sorted(await list('assigned_to=bob'))).toEqual(['a']);
    expect(sorted(await list(`assigned_to=bob,${alice.id}`))).toEqual(['a', 'c']);
    expect(sorted(await list('assigned_to=alice,%20bob'))).toEqual(['a', 'c']);
    expect(sorted(await list('assigned_to=nobody'))).toEqual([]);
    // "1" is both the admin's id (no task assigned) and carol's username.
    expect(sorted(await list('assigned_to=1'))).toEqual(['e']);
  });

  it('filters by title, case-insensitively, with % and _ taken literally', async () => {
    expect(sorted(await list('title=disk'))).toEqual(['a', 'b']);
    expect(sorted(await list('title=DISK%20FULL'))).toEqual(['a']);
    expect(sorted(await list('title=100'))).toEqual(['c', 'e']);
    expect(sorted(await list(`title=${encodeURIComponent('100%')}`))).toEqual(['c']);
    expect(sorted(await list(`title=${encodeURIComponent('u_l')}`))).toEqual(['c']);
    // Unescaped, "u_l" would also match "full".
    expect(sorted(await list('title=ull'))).toEqual(['a']);
    expect(sorted(await list(`title=${encodeURIComponent('prüf')}`))).toEqual(['f']);
    expect(sorted(await list('title='))).toHaveLength(6);
  });

  it('filters by is_open', async () => {
    expect(sorted(await list('is_open=false'))).toEqual(['d']);
    expect(sorted(await list('is_open=YES'))).toEqual(['a', 'b', 'c', 'e', 'f']);
    expect((await t.as(bob.token, { method: 'GET', url: '/api/tasks?is_open=maybe' })).statusCode).toBe(400);
  });

  it('filters by is_overdue: open with a past due date; future, null and closed are not overdue', async () => {
    const overdue = await list('is_overdue=true');
    expect(sorted(overdue)).toEqual(['a', 'f']);
    for (const task of overdue.json().results) expect(task.is_overdue).toBe(true);
    const notOverdue = await list('is_overdue=0');
    expect(sorted(notOverdue)).toEqual(['b', 'c', 'd', 'e']);
    for (const task of notOverdue.json().results) expect(task.is_overdue).toBe(false);
    expect(sorted(await list(`is_overdue=true&owner=${alice.id}`))).toEqual(['a']);
    expect((await t.as(bob.token, { method: 'GET', url: '/api/tasks?is_overdue=2' })).statusCode).toBe(400);
  });

  it('filters by unassigned', async () => {
    expect(sorted(await list('unassigned=true'))).toEqual(['b', 'd', 'f']);
    expect(sorted(await list('unassigned=no'))).toEqual(['a', 'c', 'e']);
    expect(sorted(await list('unassigned=true&is_open=true'))).toEqual(['b', 'f']);
    expect((await t.as(bob.token, { method: 'GET', url: '/api/tasks?unassigned=x' })).statusCode).toBe(400);
  });

  it('orders by priority rank, not alphabetically, ties by id', async () => {
    expect(names(await list('ordering=priority'))).toEqual(['b', 'e', 'd', 'a', 'c', 'f']);
    expect(names(await list('ordering=-priority'))).toEqual(['c', 'f', 'a', 'd', 'b', 'e']);
    expect(names(await list('ordering=-priority,-id'))).toEqual(['f', 'c', 'a', 'd', 'e', 'b']);
  });

  it('orders by due_date with undated tasks last in both directions', async () => {
    expect(names(await list('ordering=due_date'))).toEqual(['f', 'd', 'a', 'b', 'e', 'c']);
    expect(names(await list('ordering=-due_date'))).toEqual(['e', 'b', 'a', 'd', 'f', 'c']);
  });

  it('orders by title, id, created_at and updated_at, and rejects unknown fields', async () => {
    // Titles whose order no collation disputes (full order follows the database's collation).
    expect(names(await list(`ordering=title&owner=${bob.id}`))).toEqual(['c', 'd']);
    expect(names(await list(`ordering=-title&owner=${bob.id}`))).toEqual(['d', 'c']);
    expect(names(await list('ordering=-id'))).toEqual(['f', 'e', 'd', 'c', 'b', 'a']);
    expect(names(await list('ordering=created_at'))).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    const byUpdated = (await list('ordering=-updated_at')).json().results.map((r: TaskBody) => r.updated_at);
    expect(byUpdated).toEqual([...byUpdated].sort().reverse());
    for (const field of ['owner', 'ev_ids', 'is_overdue', 'nope']) {
      const res = await t.as(bob.token, { method: 'GET', url: `/api/tasks?ordering=${field}` });
      expect(res.statusCode, field).toBe(400);
      expect(res.json().errors.ordering[0]).toMatch(/Unknown field/);
    }
  });

  it('paginates, links pages, and answers a page past the end with 404', async () => {
    const p1 = (await list('page_size=4&ordering=id')).json();
    expect(p1.count).toBe(6);
    expect(p1.results).toHaveLength(4);
    const next = new URL(p1.next);
    expect(next.pathname).toBe('/api/tasks');
    expect(next.searchParams.get('page')).toBe('2');
    expect(next.searchParams.get('ordering')).toBe('id');
    const p2 = (await list(next.search.slice(1))).json();
    expect(p2.results).toHaveLength(2);
    expect(p2.next).toBeNull();
    expect(p2.previous).not.toBeNull();
    const past = await t.as(bob.token, { method: 'GET', url: '/api/tasks?page=3&page_size=4' });
    expect(past.statusCode).toBe(404);
    expect(past.json()).toEqual({ detail: 'Invalid page.', code: 'not_found' });
    const emptyFirst = await list('owner=99999&page=1');
    expect(emptyFirst.json()).toMatchObject({ count: 0, results: [] });
    for (const q of ['page=0', 'page_size=0', 'page=x']) {
      expect((await t.as(bob.token, { method: 'GET', url: `/api/tasks?${q}` })).statusCode, q).toBe(400);
    }
  });
});
