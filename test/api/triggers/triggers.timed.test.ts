import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

describe(`triggers on ${BACKEND}`, () => {
  let t: TestApp;
  let bob: { id: number; token: string };
  let carol: { id: number; token: string };
  let mona: { id: number; token: string };
  let ingestToken: string;

  beforeAll(async () => {
    t = await createTestApp();
    bob = await t.user('bob');
    carol = await t.user('carol');
    mona = await t.user('mona', { permissions: ['manage_triggers'] });
    ingestToken = (await t.rt.services.tokens.create(1, { token_type: 'INGEST', name: 'shipper' }))
      .secret_key;
  });
  afterAll(() => t.close());

  const req = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });

  /** Ingests records and waits until their trigger matches are recorded. */
  const ingest = async (records: object[], token = t.adminToken): Promise<string[]> => {
    const res = await t.as(token, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.statusCode, res.body).toBe(200);
    await t.rt.services.triggers.idle();
    const ids = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/query',
      payload: {
        type: 'Search',
        params: { time_range: { preset: 'last_hour' }, sort: ['ts'], page_size: 10000 },
      },
    });
    return ids.json().results.events.map((e: { ev_id: string }) => e.ev_id);
  };

  const matchesOf = async (evId: string) => {
    const res = await req(t.adminToken, 'GET', `/api/events/${evId}/triggers`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json().triggers as Array<{ trigger_id: number; task_id: number | null; name: string }>;
  };

  describe('CRUD and ownership', () => {
    let id: number;
    beforeAll(async () => {
      const res = await req(bob.token, 'POST', '/api/triggers', {
        name: 'ssh failures',
        query: 'app:sshd AND "failed password"',
        severity: 'high',
        enabled: false,
      });
      expect(res.statusCode, res.body).toBe(201);
      id = res.json().id;
    });

    it('creates with defaults and reads back', async () => {
      const res = await req(bob.token, 'GET', `/api/triggers/${id}/`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        id,
        name: 'ssh failures',
        description: '',
        severity: 'high',
        query: 'app:sshd AND "failed password"',
        filter: [],
        enabled: false,
        create_task: false,
        assign_to: null,
        owner: bob.id,
      });
    });

    it('matrix: owner, another user, manage_triggers holder, admin, INGEST token', async () => {
      const cases: Array<[string, string, number, number, number]> = [
        // caller, token, GET, PATCH, list count without / with show_all (>= 1 means sees it)
        ['owner', bob.token, 200, 200, 1],
        ['another user', carol.token, 404, 404, 0],
        ['manage_triggers', mona.token, 200, 200, 1],
        ['admin', t.adminToken, 200, 200, 1],
      ];
      for (const [who, token, get, patch, seesWithShowAll] of cases) {
        expect((await req(token, 'GET', `/api/triggers/${id}`)).statusCode, who).toBe(get);
        expect((await req(token, 'PATCH', `/api/triggers/${id}`, { description: who })).statusCode, who).toBe(
          patch,
        );
        const all = (await req(token, 'GET', '/api/triggers?show_all=true')).json();
        expect(
          all.results.some((r: { id: number }) => r.id === id),
          who,
        ).toBe(seesWithShowAll === 1);
        const own = (await req(token, 'GET', '/api/triggers')).json();
        expect(
          own.results.some((r: { id: number }) => r.id === id),
          who,
        ).toBe(token === bob.token);
      }
      for (const [method, url] of [
        ['GET', '/api/triggers'],
        ['POST', '/api/triggers'],
        ['GET', `/api/triggers/${id}`],
        ['PATCH', `/api/triggers/${id}`],
        ['PUT', `/api/triggers/${id}`],
        ['DELETE', `/api/triggers/${id}`],
      ] as const) {
        expect(
          (
            await req(
              ingestToken,
              method,
              url,
              method === 'GET' || method === 'DELETE' ? undefined : { name: 'x', query: 'a' },
            )
          ).statusCode,
          `${method} ${url}`,
        ).toBe(403);
      }
      expect((await req(carol.token, 'DELETE', `/api/triggers/${id}`)).statusCode).toBe(404);
      expect(
        (await req(carol.token, 'PUT', `/api/triggers/${id}`, { name: 'x', query: 'a' })).statusCode,
      ).toBe(404);
      expect((await t.as(null, { method: 'GET', url: '/api/triggers' })).statusCode).toBe(401);
    });

    it('PUT resets omitted fields; PATCH changes only what it is given', async () => {
      const put = await req(bob.token, 'PUT', `/api/triggers/${id}`, { name: 'renamed', query: 'app:sshd' });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json()).toMatchObject({
        name: 'renamed',
        severity: 'medium',
        enabled: true,
        description: '',
      });
      const patch = await req(bob.token, 'PATCH', `/api/triggers/${id}`, { enabled: false });
      expect(patch.json()).toMatchObject({ name: 'renamed', query: 'app:sshd', enabled: false });
    });

    it('filters by enabled and owner, orders, and deletes', async () => {
      const other = (
        await req(mona.token, 'POST', '/api/triggers', { name: 'mona', filter: [['host', 'eq', 'x']] })
      ).json();
      const list = (
        await req(t.adminToken, 'GET', `/api/triggers?show_all=1&enabled=true&owner=${mona.id}`)
      ).json();
      expect(list.results.map((r: { id: number }) => r.id)).toEqual([other.id]);
      const ordered = (await req(t.adminToken, 'GET', '/api/triggers?show_all=yes&ordering=-name')).json();
      expect(ordered.results.map((r: { name: string }) => r.name)).toEqual(['renamed', 'mona']);
      expect((await req(t.adminToken, 'GET', '/api/triggers?ordering=nope')).statusCode).toBe(400);
      expect((await req(mona.token, 'DELETE', `/api/triggers/${other.id}`)).statusCode).toBe(204);
      expect((await req(mona.token, 'GET', `/api/triggers/${other.id}`)).statusCode).toBe(404);
    });
  });

  describe('bad input', () => {
    it('rejects an invalid query or filter with 400 naming it, and stores nothing', async () => {
      const before = (await req(t.adminToken, 'GET', '/api/triggers?show_all=true')).json().count;
      const cases: Array<[object, string]> = [
        [{ name: 'q', query: 'status:[1 TO' }, 'query'],
        [{ name: 'f', filter: [['host', 'nope', 'x']] }, 'filter[0][1]'],
        [{ name: 'r', query: 'message:/(?=x)/' }, 'query'],
        [{ name: 'empty' }, 'query'],
        [{ name: 'blank', query: '  ' }, 'query'],
        [{ name: ' ', query: 'a' }, 'name'],
        [{ name: 'a', query: 'a', assign_to: 9999 }, 'assign_to'],
        [{ name: 'a', query: 'a', severity: 'urgent' }, 'severity'],
        [{ name: 'a', query: 'a', owner: 1 }, 'owner'],
        [{ query: 'a' }, 'name'],
      ];
      for (const [body, field] of cases) {
        const res = await req(bob.token, 'POST', '/api/triggers', body);
        expect(res.statusCode, JSON.stringify(body)).toBe(400);
        expect(Object.keys(res.json().errors ?? {}).join(','), JSON.stringify(body)).toContain(field);
      }
      expect((await req(bob.token, 'GET', '/api/triggers/0')).statusCode).toBe(400);
      expect((await req(bob.token, 'GET', '/api/triggers/abc')).statusCode).toBe(400);
      expect((await req(bob.token, 'GET', '/api/triggers/99999')).statusCode).toBe(404);
      const after = (await req(t.adminToken, 'GET', '/api/triggers?show_all=true')).json().count;
      expect(after).toBe(before);
    });

    it('rejects a PATCH that would leave the trigger matching everything', async () => {
      const created = (await req(bob.token, 'POST', '/api/triggers', { name: 'p', query: 'a' })).json();
      const res = await req(bob.token, 'PATCH', `/api/triggers/${created.id}`, { query: '' });
      expect(res.statusCode).toBe(400);
      expect((await req(bob.token, 'GET', `/api/triggers/${created.id}`)).json().query).toBe('a');
      await req(bob.token, 'DELETE', `/api/triggers/${created.id}`);
    });
  });

  describe('matching on ingest', () => {
    it('records matches of enabled triggers only, with their time', async () => {
      const hit = (
        await req(bob.token, 'POST', '/api/triggers', {
          name: 'sshd fail',
          query: 'app:sshd AND "Failed password"',
          severity: 'critical',
          description: 'brute force?',
        })
      ).json();
      const off = (
        await req(bob.token, 'POST', '/api/triggers', { name: 'off', query: 'app:sshd', enabled: false })
      ).json();
      const before = Date.now() / 1000;
      const ids = await ingest([
        { app: 'sshd', message: 'Failed password for root from 10.0.0.1', tag: 'm1' },
        { app: 'sshd', message: 'Accepted publickey for bob', tag: 'm2' },
        { app: 'nginx', message: 'Failed password in a URL', tag: 'm3' },
      ]);
      const [m1, m2, m3] = ids.slice(-3) as [string, string, string];
      const matches = await matchesOf(m1);
      expect(matches).toEqual([
        {
          trigger_id: hit.id,
          name: 'sshd fail',
          severity: 'critical',
          description: 'brute force?',
          matched_at: expect.any(Number),
          task_id: null,
        },
      ]);
      expect((matches[0] as unknown as { matched_at: number }).matched_at).toBeGreaterThanOrEqual(
        Math.floor(before),
      );
      expect(await matchesOf(m2)).toEqual([]);
      expect(await matchesOf(m3)).toEqual([]);
      expect(
        (await req(t.adminToken, 'GET', '/api/events/01ARZ3NDEKTSV4RRFFQ69G5FAV/triggers')).statusCode,
      ).toBe(404);
      // add_trigger_data on the event and on Search results
      const ev = (await req(t.adminToken, 'GET', `/api/events/${m1}?add_trigger_data=true`)).json();
      expect(ev.triggers).toEqual([expect.objectContaining({ trigger_id: hit.id, name: 'sshd fail' })]);
      const search = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/query?add_trigger_data=true',
        payload: { type: 'Search', params: { time_range: { preset: 'last_hour' }, query: 'app:sshd' } },
      });
      const byId = new Map(
        search
          .json()
          .results.events.map((e: { ev_id: string; triggers: unknown[] }) => [e.ev_id, e.triggers]),
      );
      expect(byId.get(m1)).toEqual([expect.objectContaining({ trigger_id: hit.id, severity: 'critical' })]);
      expect(byId.get(m2)).toEqual([]);
      await req(bob.token, 'DELETE', `/api/triggers/${off.id}`);
      // Deleting the trigger deletes its matches.
      await req(bob.token, 'DELETE', `/api/triggers/${hit.id}`);
      expect(await matchesOf(m1)).toEqual([]);
    });

    it('a catastrophic-backtracking regex matches in linear time during ingest', async () => {
      const trig = (
        await req(bob.token, 'POST', '/api/triggers', {
          name: 'bomb',
          filter: [['message', 'regex', '^(a+)+$']],
        })
      ).json();
      const started = performance.now();
      const ids = await ingest([{ message: `${'a'.repeat(20_000)}!` }, { message: 'a'.repeat(20_000) }]);
      expect(performance.now() - started).toBeLessThan(2000);
      const [bomb, plain] = ids.slice(-2) as [string, string];
      expect(await matchesOf(bomb)).toEqual([]);
      expect((await matchesOf(plain)).map((m) => m.trigger_id)).toEqual([trig.id]);
      await req(bob.token, 'DELETE', `/api/triggers/${trig.id}`);
    });
  });

  describe('tasks from triggers', () => {
    it('opens one task per window: repeated matches join it; a closed task makes way for a new one', async () => {
      const trig = (
        await req(bob.token, 'POST', '/api/triggers', {
          name: 'disk full',
          query: '"no space left"',
          severity: 'high',
          create_task: true,
          assign_to: carol.id,
        })
      ).json();
      const first = (await ingest([{ host: 'db-1', message: 'write failed: No space left on device' }])).at(
        -1,
      )!;
      const second = (
        await ingest([
          { host: 'db-2', message: 'no space left' },
          { host: 'db-2', message: 'all good' },
        ])
      ).at(-2)!;
      const tasks = (await req(bob.token, 'GET', '/api/tasks?title=disk full')).json();
      expect(tasks.count).toBe(1);
      const task = tasks.results[0];
      expect(task).toMatchObject({
        owner: bob.id,
        assigned_to: carol.id,
        priority: 'high',
        trigger_id: trig.id,
        is_open: true,
      });
      expect(task.ev_ids).toEqual([first, second]);
      expect((await matchesOf(second))[0]?.task_id).toBe(task.id);
      // The assignee closes it; the next match opens a new task.
      expect((await req(carol.token, 'PATCH', `/api/tasks/${task.id}`, { is_open: false })).statusCode).toBe(
        200,
      );
      const third = (await ingest([{ message: 'No space left again' }])).at(-1)!;
      const after = (await req(bob.token, 'GET', '/api/tasks?title=disk full&ordering=id')).json();
      expect(after.count).toBe(2);
      expect(after.results[1]).toMatchObject({ ev_ids: [third], is_open: true, trigger_id: trig.id });
      // Deleting a task leaves its matches, naming no task.
      expect((await req(bob.token, 'DELETE', `/api/tasks/${after.results[1].id}`)).statusCode).toBe(204);
      expect(await matchesOf(third)).toEqual([
        expect.objectContaining({ trigger_id: trig.id, task_id: null }),
      ]);
      // Deleting the trigger keeps its tasks, unlinked.
      await req(bob.token, 'DELETE', `/api/triggers/${trig.id}`);
      const kept = (await req(bob.token, 'GET', `/api/tasks/${task.id}`)).json();
      expect(kept).toMatchObject({ id: task.id, trigger_id: null });
    });
  });
});

describe(`trigger tasks without a window on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_TRIGGER_TASK_WINDOW_SECONDS: '0' });
  });
  afterAll(() => t.close());

  it('opens a task per batch of matches', async () => {
    await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/triggers',
      payload: { name: 'each', query: 'boom', create_task: true },
    });
    for (const message of ['boom 1', 'boom 2']) {
      await t.as(t.adminToken, { method: 'POST', url: '/api/ingest', payload: { message } });
      await t.rt.services.triggers.idle();
    }
    expect((await t.as(t.adminToken, { method: 'GET', url: '/api/tasks?title=each' })).json().count).toBe(2);
  });
});

describe(`triggers per user on ${BACKEND}`, () => {
  it('refuses a trigger past triggersPerUser with 409, and another user is not counted', async () => {
    const t = await createTestApp({ LOGSCOPE_TRIGGERS_PER_USER: '3' });
    try {
      const dan = await t.user('dan');
      const make = (token: string, i: number) =>
        t.as(token, { method: 'POST', url: '/api/triggers', payload: { name: `t${i}`, query: `word${i}` } });
      for (let i = 0; i < 3; i++) expect((await make(dan.token, i)).statusCode).toBe(201);
      const over = await make(dan.token, 3);
      expect(over.statusCode).toBe(409);
      expect(over.json()).toMatchObject({ code: 'limit_reached' });
      expect(over.json().detail).toContain('triggersPerUser');
      expect((await make(t.adminToken, 9)).statusCode).toBe(201);
    } finally {
      await t.close();
    }
  });
});
