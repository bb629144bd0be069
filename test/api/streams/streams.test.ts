import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerEventStore } from '../../../src/event-store/worker/worker-event-store.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };
interface StreamBody {
  id: number;
  title: string;
  description: string;
  rule: string | null;
  readers: { teams: number[]; users: number[] };
  retention_days: number | null;
  hot_days: number | null;
  owner: number | null;
  builtin: boolean;
  created_at: string;
  updated_at: string;
  event_count?: number;
}

describe(`streams on ${BACKEND}`, () => {
  let t: TestApp;
  let alice: Who;
  let bob: Who;
  let keeper: Who;
  let everyoneId: number;
  let payTeam: number;

  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const titles = async (token: string) =>
    (await call(token, 'GET', '/api/streams')).json().results.map((s: StreamBody) => s.title);
  const streamCount = async () => (await t.rt.meta.db.selectFrom('streams').select('id').execute()).length;
  const deflt = async (): Promise<StreamBody> =>
    (await call(t.adminToken, 'GET', '/api/streams')).json().results.find((s: StreamBody) => s.builtin);

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
    keeper = await t.user('keeper', { permissions: ['manage_streams'] });
    const teams = (await call(alice.token, 'GET', '/api/teams')).json().results;
    everyoneId = teams.find((x: { builtin: boolean }) => x.builtin).id;
    payTeam = (
      await call(t.adminToken, 'POST', '/api/teams', { name: 'payments', members: [alice.id] })
    ).json().id;
  });
  afterAll(() => t.close());

  it('starts with the built-in Default stream, read by everyone', async () => {
    const res = await call(bob.token, 'GET', '/api/streams');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      count: 1,
      results: [
        {
          title: 'Default',
          rule: null,
          builtin: true,
          readers: { teams: [everyoneId], users: [] },
          retention_days: null,
          hot_days: null,
          owner: null,
        },
      ],
    });
  });

  it('lets admins and manage_streams holders create, change and delete streams; lists what each may read', async () => {
    const made = await call(keeper.token, 'POST', '/api/streams', {
      title: 'Payments',
      rule: 'app:payments OR app:billing',
      readers: { teams: [payTeam] },
      retention_days: 90,
    });
    expect(made.statusCode, made.body).toBe(201);
    const pay: StreamBody = made.json();
    expect(pay).toMatchObject({
      title: 'Payments',
      description: '',
      rule: 'app:payments OR app:billing',
      readers: { teams: [payTeam], users: [] },
      retention_days: 90,
      hot_days: null,
      owner: keeper.id,
      builtin: false,
    });
    const auth: StreamBody = (
      await call(t.adminToken, 'POST', '/api/streams', {
        title: 'Auth',
        rule: 'app:sshd',
        readers: { users: [bob.id] },
      })
    ).json();

    expect(await titles(alice.token)).toEqual(['Default', 'Payments']);
    expect(await titles(bob.token)).toEqual(['Default', 'Auth']);
    expect(await titles(keeper.token)).toEqual(['Default', 'Payments', 'Auth']);
    expect(await titles(t.adminToken)).toEqual(['Default', 'Payments', 'Auth']);
    expect((await call(bob.token, 'GET', `/api/streams/${pay.id}`)).statusCode).toBe(404);
    // A reader's GET carries the stream's tiers (docs/operations/cold-tier.md) besides.
    const { tiers, ...read } = (await call(alice.token, 'GET', `/api/streams/${pay.id}`)).json();
    expect(read).toEqual(pay);
    expect(tiers.hot).toEqual({ events: 0, bytes: 0 });

    const patched = await call(keeper.token, 'PATCH', `/api/streams/${pay.id}`, {
      description: 'card payments',
      readers: { users: [bob.id] },
    });
    expect(patched.json()).toMatchObject({
      description: 'card payments',
      rule: pay.rule,
      readers: { teams: [], users: [bob.id] },
    });
    expect(await titles(alice.token)).toEqual(['Default']);
    const replaced = await call(t.adminToken, 'PUT', `/api/streams/${pay.id}`, {
      title: 'Pay',
      rule: 'app:payments',
    });
    expect(replaced.json()).toMatchObject({
      title: 'Pay',
      description: '',
      readers: { teams: [], users: [] },
      retention_days: null,
    });

    for (const id of [pay.id, auth.id])
      expect((await call(keeper.token, 'DELETE', `/api/streams/${id}`)).statusCode).toBe(204);
    expect((await call(t.adminToken, 'GET', `/api/streams/${pay.id}`)).statusCode).toBe(404);
    expect(await titles(t.adminToken)).toEqual(['Default']);
  });

  it('refuses users without manage_streams, with nothing changed', async () => {
    const before = await streamCount();
    expect((await call(alice.token, 'POST', '/api/streams', { title: 'x', rule: 'a' })).statusCode).toBe(403);
    const d = await deflt();
    expect((await call(alice.token, 'PATCH', `/api/streams/${d.id}`, { retention_days: 1 })).statusCode).toBe(
      403,
    );
    expect((await call(alice.token, 'DELETE', `/api/streams/${d.id}`)).statusCode).toBe(403);
    expect(await streamCount()).toBe(before);
    expect(await deflt()).toEqual(d);
  });

  it('answers bad input with 400 or 409 naming the field, and stores nothing', async () => {
    const before = await streamCount();
    const cases: Array<[object, number, string]> = [
      [{ title: 'x' }, 400, 'rule'],
      [{ title: 'x', rule: '   ' }, 400, 'rule'],
      [{ title: 'x', rule: null }, 400, 'rule'],
      [{ title: 'x', rule: 'host:(a' }, 400, 'rule'],
      [{ title: ' ', rule: 'a' }, 400, 'title'],
      [{ rule: 'a' }, 400, 'title'],
      [{ title: 'x', rule: 'a', readers: { teams: [999_999] } }, 400, 'readers.teams'],
      [{ title: 'x', rule: 'a', readers: { users: [999_999] } }, 400, 'readers.users'],
      [{ title: 'x', rule: 'a', readers: { groups: [1] } }, 400, 'readers.groups'],
      [{ title: 'x', rule: 'a', retention_days: -1 }, 400, 'retention_days'],
      [{ title: 'x', rule: 'a', retention_days: 1.5 }, 400, 'retention_days'],
      [{ title: 'x', rule: 'a', builtin: true }, 400, 'builtin'],
      [{ title: 'default', rule: 'a' }, 409, ''],
    ];
    for (const [payload, status, field] of cases) {
      const res = await call(t.adminToken, 'POST', '/api/streams', payload);
      expect(res.statusCode, `${JSON.stringify(payload)} → ${res.body.slice(0, 300)}`).toBe(status);
      if (field) expect(Object.keys(res.json().errors ?? {})).toContain(field);
      else expect(res.json().code).toBe('conflict');
    }
    const syntax = await call(t.adminToken, 'POST', '/api/streams', { title: 'x', rule: 'host:(a' });
    expect(syntax.json().errors.rule[0]).toMatch(/^Syntax error at position 7/);
    expect(await streamCount()).toBe(before);
  });

  it('eight identical creates at once: one 201, the others 409 conflict, one stream stored', async () => {
    const before = await streamCount();
    const answers = await Promise.all(
      Array.from({ length: 8 }, () =>
        call(t.adminToken, 'POST', '/api/streams', { title: 'Twins', rule: 'app:twins' }),
      ),
    );
    const statuses = answers.map((r) => r.statusCode).sort();
    expect(statuses, answers.map((r) => r.body).join('\n')).toEqual([201, ...Array(7).fill(409)]);
    for (const r of answers.filter((a) => a.statusCode === 409)) expect(r.json().code).toBe('conflict');
    expect(await streamCount()).toBe(before + 1);
    const made = answers.find((r) => r.statusCode === 201)?.json() as StreamBody;
    expect((await call(t.adminToken, 'DELETE', `/api/streams/${made.id}`)).statusCode).toBe(204);
  });

  it('keeps the Default stream: readers, retention and description change; its rule and title do not; it is never deleted', async () => {
    const d = await deflt();
    const changed = await call(t.adminToken, 'PATCH', `/api/streams/${d.id}`, {
      readers: { teams: [payTeam], users: [bob.id] },
      retention_days: 30,
      description: 'the rest',
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({
      readers: { teams: [payTeam], users: [bob.id] },
      retention_days: 30,
      rule: null,
    });
    expect(await titles(keeper.token)).toEqual(['Default']);
    expect(await titles(await t.user('nobody').then((u) => u.token))).toEqual([]);
    for (const payload of [{ rule: 'app:x' }, { title: 'Other' }]) {
      const res = await call(t.adminToken, 'PATCH', `/api/streams/${d.id}`, payload);
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json().errors)).toEqual(Object.keys(payload));
    }
    const del = await call(t.adminToken, 'DELETE', `/api/streams/${d.id}`);
    expect(del.statusCode).toBe(409);
    await call(t.adminToken, 'PATCH', `/api/streams/${d.id}`, {
      readers: { teams: [everyoneId] },
      retention_days: null,
      description: d.description,
    });
    expect(await deflt()).toMatchObject({
      readers: d.readers,
      retention_days: null,
      description: d.description,
    });
  });

  it('drops a deleted team or user from the readers', async () => {
    const team = (await call(t.adminToken, 'POST', '/api/teams', { name: 'temp' })).json();
    const carl = await t.user('carl');
    const s: StreamBody = (
      await call(t.adminToken, 'POST', '/api/streams', {
        title: 'Temp',
        rule: 'app:temp',
        readers: { teams: [team.id, payTeam], users: [carl.id, bob.id] },
      })
    ).json();
    await call(t.adminToken, 'DELETE', `/api/teams/${team.id}`);
    await call(t.adminToken, 'DELETE', `/api/users/${carl.id}`);
    expect((await call(t.adminToken, 'GET', `/api/streams/${s.id}`)).json().readers).toEqual({
      teams: [payTeam],
      users: [bob.id],
    });
    await call(t.adminToken, 'DELETE', `/api/streams/${s.id}`);
  });

  it('counts each stream’s events of the last 24 hours with ?counts=true; Default counts what no rule claims', async () => {
    const now = Date.now();
    const records = [
      ...Array.from({ length: 3 }, (_, i) => ({
        ts: new Date(now - 1000 - i).toISOString(),
        app: 'payments',
        message: 'paid',
      })),
      ...Array.from({ length: 2 }, (_, i) => ({
        ts: new Date(now - 2000 - i).toISOString(),
        app: 'sshd',
        message: 'login',
      })),
      { ts: new Date(now - 2 * 86_400_000).toISOString(), app: 'payments', message: 'old' },
    ];
    const ing = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(ing.statusCode, ing.body).toBe(200);
    const pay = (
      await call(t.adminToken, 'POST', '/api/streams', {
        title: 'Pay',
        rule: 'app:payments',
        readers: { teams: [payTeam] },
      })
    ).json();
    const counted = (await call(t.adminToken, 'GET', '/api/streams?counts=true')).json().results;
    expect(counted.map((s: StreamBody) => [s.title, s.event_count])).toEqual([
      ['Default', 2],
      ['Pay', 3],
    ]);
    expect((await call(alice.token, 'GET', `/api/streams/${pay.id}?counts=1`)).json().event_count).toBe(3);
    expect((await call(alice.token, 'GET', `/api/streams/${pay.id}`)).json()).not.toHaveProperty(
      'event_count',
    );
    // A manage_streams holder who may read only Default sees Pay to manage it, but not its count.
    const managed = (await call(keeper.token, 'GET', '/api/streams?counts=true')).json().results;
    expect(managed.map((s: StreamBody) => [s.title, s.event_count])).toEqual([
      ['Default', 2],
      ['Pay', undefined],
    ]);
    expect((await call(keeper.token, 'GET', `/api/streams/${pay.id}?counts=1`)).json()).not.toHaveProperty(
      'event_count',
    );
    await call(t.adminToken, 'DELETE', `/api/streams/${pay.id}`);
    const back = (await call(t.adminToken, 'GET', '/api/streams?counts=true')).json().results;
    expect(back.map((s: StreamBody) => s.event_count)).toEqual([5]);
  });

  // ADR 0016: the server gives the store the streams' rules as they change, and the store
  // writes each event's membership bits (read scopes are then read by them).
  it.runIf(EVENT_STORE === 'duckdb')(
    'gives the event store the rules, whose bits it writes over stored events',
    async () => {
      const res = await call(t.adminToken, 'POST', '/api/ingest', [
        { host: 'bits-a', message: 'one' },
        { host: 'bits-b', message: 'two' },
      ] as unknown as object);
      expect(res.statusCode, res.body).toBe(200);
      const made = await call(t.adminToken, 'POST', '/api/streams', {
        title: 'Bits',
        rule: 'host:bits-a',
        readers: {},
      });
      expect(made.statusCode, made.body).toBe(201);
      const id = made.json().id as number;
      const rules = (await t.rt.meta.db.selectFrom('streams').select(['id', 'rule']).execute())
        .filter((r) => r.rule !== null)
        .sort((a, b) => a.id - b.id);
      const bit = 1n << BigInt(rules.findIndex((r) => r.id === id));
      const unclaimed = 1n << BigInt(rules.length);
      const store = t.rt.events as WorkerEventStore;
      const bitsOf = async () => {
        const rows = await store.runSql(
          "SELECT host, streams FROM events WHERE host IN ('bits-a', 'bits-b') ORDER BY host",
        );
        return rows.map((r) => [r.host, r.streams === null ? null : BigInt(r.streams as bigint)]);
      };
      await expect.poll(bitsOf, { timeout: 10_000 }).toEqual([
        ['bits-a', bit],
        ['bits-b', unclaimed],
      ]);
      // Once every update asked for is through (another may follow the one that wrote them).
      await expect
        .poll(async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body, { timeout: 10_000 })
        .toMatch(/^logscope_stream_membership_pending 0$/m);
    },
  );
});
