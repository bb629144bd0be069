import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

type Who = { id: number; token: string };
interface TeamBody {
  id: number;
  name: string;
  members: number[];
  builtin: boolean;
  created_at: string;
}

describe(`teams on ${BACKEND}`, () => {
  let t: TestApp;
  let alice: Who;
  let bob: Who;
  let carol: Who;

  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const teamCount = async () => (await t.rt.meta.db.selectFrom('teams').select('id').execute()).length;
  const everyone = async (token = alice.token): Promise<TeamBody> =>
    (await call(token, 'GET', '/api/teams?ordering=id')).json().results.find((x: TeamBody) => x.builtin);

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    bob = await t.user('bob');
    carol = await t.user('carol', { permissions: ['manage_triggers'] });
  });
  afterAll(() => t.close());

  it('has the built-in team everyone, which every user may list and which holds every user', async () => {
    const res = await call(alice.token, 'GET', '/api/teams');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ count: 1, next: null, previous: null });
    const all = await everyone();
    expect(all).toMatchObject({ name: 'everyone', builtin: true });
    expect(all.members).toEqual(expect.arrayContaining([alice.id, bob.id, carol.id]));
    const dave = await t.user('dave');
    expect((await everyone()).members).toContain(dave.id);
    expect((await call(alice.token, 'GET', `/api/teams/${all.id}`)).json()).toEqual(await everyone());
  });

  it('lets admins create, rename, re-member and delete a team', async () => {
    const created = await call(t.adminToken, 'POST', '/api/teams', {
      name: ' payments ',
      members: [bob.id, alice.id, bob.id],
    });
    expect(created.statusCode, created.body).toBe(201);
    const team: TeamBody = created.json();
    expect(team).toMatchObject({
      name: 'payments',
      builtin: false,
      members: [alice.id, bob.id].sort((a, b) => a - b),
    });
    expect(new Date(team.created_at).toISOString()).toBe(team.created_at);
    expect((await call(bob.token, 'GET', `/api/teams/${team.id}`)).json()).toEqual(team);

    const all = await everyone();
    const aliceNow = (await call(alice.token, 'GET', '/api/users/me')).json();
    expect(aliceNow.teams).toEqual([all.id, team.id].sort((a, b) => a - b));
    expect((await call(t.adminToken, 'GET', `/api/users/${carol.id}`)).json().teams).toEqual([all.id]);
    const listed = (await call(t.adminToken, 'GET', '/api/users')).json().results;
    expect(listed.find((u: { id: number }) => u.id === bob.id).teams).toEqual(
      [all.id, team.id].sort((a, b) => a - b),
    );

    const renamed = await call(t.adminToken, 'PATCH', `/api/teams/${team.id}`, { name: 'billing' });
    expect(renamed.json()).toMatchObject({ name: 'billing', members: team.members });
    const remembered = await call(t.adminToken, 'PATCH', `/api/teams/${team.id}`, { members: [carol.id] });
    expect(remembered.json()).toMatchObject({ name: 'billing', members: [carol.id] });
    const replaced = await call(t.adminToken, 'PUT', `/api/teams/${team.id}`, { name: 'billing-eu' });
    expect(replaced.json()).toMatchObject({ name: 'billing-eu', members: [] });

    const byName = await call(alice.token, 'GET', '/api/teams?ordering=-name');
    expect(byName.json().results.map((x: TeamBody) => x.name)).toEqual(['everyone', 'billing-eu']);

    const gone = await call(t.adminToken, 'DELETE', `/api/teams/${team.id}`);
    expect(gone.statusCode, gone.body).toBe(204);
    expect((await call(t.adminToken, 'GET', `/api/teams/${team.id}`)).statusCode).toBe(404);
    expect((await call(t.adminToken, 'DELETE', `/api/teams/${team.id}`)).statusCode).toBe(404);
  });

  it('refuses everyone but admins to change teams, with nothing changed', async () => {
    const before = await teamCount();
    const made = await call(carol.token, 'POST', '/api/teams', { name: 'mine' });
    expect(made.statusCode, made.body).toBe(403);
    expect(await teamCount()).toBe(before);
    const team: TeamBody = (
      await call(t.adminToken, 'POST', '/api/teams', { name: 'ops', members: [bob.id] })
    ).json();
    for (const [method, payload] of [
      ['PATCH', { name: 'x' }],
      ['PUT', { name: 'x' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(bob.token, method, `/api/teams/${team.id}`, payload);
      expect(res.statusCode, `${method} ${res.body}`).toBe(403);
    }
    expect((await call(bob.token, 'GET', `/api/teams/${team.id}`)).json()).toEqual(team);
    const ingest = (await t.rt.services.tokens.create(alice.id, { token_type: 'INGEST' })).secret_key;
    expect((await call(ingest, 'GET', '/api/teams')).statusCode).toBe(403);
    await call(t.adminToken, 'DELETE', `/api/teams/${team.id}`);
  });

  it('answers bad input with a 400 or 409 naming the problem, and stores nothing', async () => {
    const before = await teamCount();
    const cases: Array<[object, number, string]> = [
      [{ name: '   ' }, 400, 'name'],
      [{ name: '' }, 400, 'name'],
      [{ name: 'x'.repeat(101) }, 400, 'name'],
      [{ members: [alice.id] }, 400, 'name'],
      [{ name: 'a', members: [alice.id, 999_999] }, 400, 'members'],
      [{ name: 'a', members: ['bob'] }, 400, 'members.0'],
      [{ name: 'a', members: Array(10_001).fill(alice.id) }, 400, 'members'],
      [{ name: 'a', colour: 'red' }, 400, 'colour'],
      [{ name: 'Everyone' }, 409, ''],
    ];
    for (const [payload, status, field] of cases) {
      const res = await call(t.adminToken, 'POST', '/api/teams', payload);
      expect(res.statusCode, `${JSON.stringify(payload).slice(0, 80)} → ${res.body.slice(0, 200)}`).toBe(
        status,
      );
      if (field) expect(Object.keys(res.json().errors ?? {})).toContain(field);
      else expect(res.json()).toMatchObject({ code: 'conflict' });
    }
    expect(
      (await call(t.adminToken, 'POST', '/api/teams', { name: 'a', members: [999_999] })).json().errors,
    ).toEqual({
      members: ['No user has the id 999999.'],
    });
    const first = (await call(t.adminToken, 'POST', '/api/teams', { name: 'Security' })).json();
    expect((await call(t.adminToken, 'POST', '/api/teams', { name: 'security' })).statusCode).toBe(409);
    const second = (await call(t.adminToken, 'POST', '/api/teams', { name: 'audit' })).json();
    const clash = await call(t.adminToken, 'PATCH', `/api/teams/${second.id}`, { name: 'SECURITY' });
    expect(clash.statusCode).toBe(409);
    const badMember = await call(t.adminToken, 'PATCH', `/api/teams/${second.id}`, {
      members: [alice.id, 0],
    });
    expect(badMember.statusCode).toBe(400);
    expect((await call(t.adminToken, 'GET', `/api/teams/${second.id}`)).json()).toEqual(second);
    expect((await call(t.adminToken, 'GET', '/api/teams/0')).statusCode).toBe(400);
    expect((await call(t.adminToken, 'GET', '/api/teams/abc')).statusCode).toBe(400);
    for (const id of [first.id, second.id]) await call(t.adminToken, 'DELETE', `/api/teams/${id}`);
    expect(await teamCount()).toBe(before);
  });

  it('keeps the built-in team as it is: 409 on any change, 404 never', async () => {
    const all = await everyone();
    for (const [method, payload] of [
      ['PATCH', { name: 'all' }],
      ['PATCH', { members: [alice.id] }],
      ['PUT', { name: 'everyone' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(t.adminToken, method, `/api/teams/${all.id}`, payload);
      expect(res.statusCode, `${method} ${res.body}`).toBe(409);
      expect(res.json().code).toBe('conflict');
    }
    expect(await everyone()).toEqual(all);
  });

  it('drops a deleted user from the teams they were in', async () => {
    const eve = await t.user('eve');
    const team: TeamBody = (
      await call(t.adminToken, 'POST', '/api/teams', { name: 'night shift', members: [eve.id, bob.id] })
    ).json();
    expect((await call(t.adminToken, 'DELETE', `/api/users/${eve.id}`)).statusCode).toBe(204);
    expect((await call(t.adminToken, 'GET', `/api/teams/${team.id}`)).json().members).toEqual([bob.id]);
    expect((await everyone()).members).not.toContain(eve.id);
    await call(t.adminToken, 'DELETE', `/api/teams/${team.id}`);
  });
});
