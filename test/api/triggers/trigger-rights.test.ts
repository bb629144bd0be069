import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { type Received, receiver } from '../../helpers/webhook-receiver.js';

type Who = { id: number; token: string };
type Sample = { ev_id: string; message: string | null };
type Hook = Awaited<ReturnType<typeof receiver>>;

/**
 * Whose rights a trigger reads with (docs/access.md, docs/api/triggers.md): a trigger matches,
 * notifies and opens tasks within the rights of whoever last decided what it matches and
 * where it sends, a delivery's samples are shown only to whom they were read for, and a
 * task's event ids only to those who may read the events. Stream Vault (`app:vault`) is
 * read by alice; mallory holds manage_triggers and reads only Default; carol reads Default.
 */
describe(`trigger rights (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let alice: Who;
  let mallory: Who;
  let carol: Who;
  const hooks: Hook[] = [];

  const call = (token: string, method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, payload?: object) =>
    t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const ok = async (token: string, method: 'POST' | 'PATCH' | 'PUT', url: string, payload: object) => {
    const res = await call(token, method, url, payload);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  /** Ingests records; resolves once their trigger matches are recorded. */
  const ingest = async (records: object[]) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.statusCode, res.body).toBe(200);
    await t.rt.services.triggers.idle();
  };
  const idOf = async (message: string): Promise<string> => {
    const res = await call(t.adminToken, 'POST', '/api/query', {
      type: 'Search',
      params: { time_range: { preset: 'last_hour' }, query: `"${message}"`, page_size: 10 },
    });
    const found = res.json().results.events as Array<{ ev_id: string; message: string }>;
    const event = found.find((e) => e.message === message);
    if (!event) throw new Error(`no event "${message}"`);
    return event.ev_id;
  };
  const hook = async (who: Who, name: string) => {
    const r = await receiver();
    hooks.push(r);
    const channel = await ok(who.token, 'POST', '/api/channels', {
      name,
      type: 'webhook',
      config: { url: r.url },
    });
    return { r, channel: channel.id as number };
  };
  const samplesOf = (got: Received[]) =>
    got.flatMap((g) => (JSON.parse(g.body) as { samples: Sample[] }).samples.map((s) => s.message));
  /** Waits for a notification carrying `message`, then a moment for any later one. */
  const arrived = async (r: Hook, message: string) => {
    await eventually(`a notification of "${message}"`, () =>
      samplesOf(r.got).includes(message) ? true : undefined,
    );
    await new Promise((res) => setTimeout(res, 300));
    return samplesOf(r.got);
  };

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.user('alice');
    mallory = await t.user('mallory', { permissions: ['manage_triggers'] });
    carol = await t.user('carol');
    const vault = await call(t.adminToken, 'POST', '/api/streams', {
      title: 'Vault',
      rule: 'app:vault',
      readers: { users: [alice.id] },
    });
    expect(vault.statusCode, vault.body).toBe(201);
  });
  afterAll(async () => {
    await t?.close();
    for (const r of hooks) await r.close();
  });

  it('a trigger another user points at their channel runs with their rights: no hidden sample arrives', async () => {
    const mine = await hook(mallory, 'mallory hook');
    for (const [owner, token] of [
      ['alice', alice.token],
      ['admin', t.adminToken],
    ] as const) {
      const word = `leakword${owner}`;
      const trigger = await ok(token, 'POST', '/api/triggers', {
        name: `${owner} watches`,
        query: word,
        cooldown_seconds: 0,
      });
      // Naming the stream alice may read, and mallory may not, is refused to mallory…
      const named = await call(mallory.token, 'PATCH', `/api/triggers/${trigger.id}`, {
        query: 'stream:Vault',
        notify: [mine.channel],
      });
      expect(named.statusCode, named.body).toBe(400);
      expect(named.json().errors.query[0]).toMatch(/No stream you may read/);
      // …and pointing it at her channel makes it run with her rights.
      const taken = await ok(mallory.token, 'PATCH', `/api/triggers/${trigger.id}`, {
        notify: [mine.channel],
      });
      await ingest([
        { app: 'vault', message: `${word} root token s3cr3t` },
        { app: 'web', message: `${word} public` },
      ]);
      const got = await arrived(mine.r, `${word} public`);
      expect(got).not.toContain(`${word} root token s3cr3t`);
      expect(mine.r.got.map((g) => g.body).join('\n')).not.toContain('s3cr3t');
      expect(trigger.run_as).toBe(trigger.owner);
      expect(taken).toMatchObject({ owner: trigger.owner, run_as: mallory.id, notify: [mine.channel] });
    }
  });

  it('a stored stream the editor may not read is refused when they change where it sends', async () => {
    const mine = await hook(mallory, 'mallory second hook');
    const trigger = await ok(alice.token, 'POST', '/api/triggers', {
      name: 'vault only',
      query: 'stream:Vault',
    });
    const res = await call(mallory.token, 'PATCH', `/api/triggers/${trigger.id}`, { notify: [mine.channel] });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid' });
    expect(res.json().errors.query[0]).toMatch(/run with your rights/);
    expect((await call(alice.token, 'GET', `/api/triggers/${trigger.id}`)).json()).toMatchObject({
      notify: [],
      run_as: alice.id,
    });
    // A change of its name only decides nothing: the trigger keeps its rights.
    const renamed = await ok(mallory.token, 'PATCH', `/api/triggers/${trigger.id}`, {
      name: 'vault, renamed',
    });
    expect(renamed.run_as).toBe(alice.id);
  });

  it('a channel whose destination another user set carries only what that user may read', async () => {
    const alices = await hook(alice, 'alice hook');
    await ok(alice.token, 'POST', '/api/triggers', {
      name: 'alice channel watch',
      query: 'chanword',
      cooldown_seconds: 0,
      notify: [alices.channel],
    });
    const stolen = await receiver();
    hooks.push(stolen);
    const changed = await ok(mallory.token, 'PATCH', `/api/channels/${alices.channel}`, {
      config: { url: stolen.url },
    });
    // The change reloads the triggers (queued at once): wait for that reload to end.
    await t.rt.services.triggers.load();
    await ingest([
      { app: 'vault', message: 'chanword vault key' },
      { app: 'web', message: 'chanword public' },
    ]);
    const got = await arrived(stolen, 'chanword public');
    expect(got).not.toContain('chanword vault key');
    expect(alices.r.got).toHaveLength(0);
    expect(changed).toMatchObject({ owner: alice.id, decided_by: mallory.id });
  });

  it('what waited to be sent does not go where another user pointed the channel', async () => {
    let refusing = true;
    const failing = await receiver(() => (refusing ? 503 : 200));
    hooks.push(failing);
    const channel = (
      await ok(alice.token, 'POST', '/api/channels', {
        name: 'alice flaky',
        type: 'webhook',
        config: { url: failing.url },
      })
    ).id as number;
    const trigger = await ok(alice.token, 'POST', '/api/triggers', {
      name: 'alice pending watch',
      query: 'pendword',
      cooldown_seconds: 2,
      notify: [channel],
    });
    await ingest([{ app: 'vault', message: 'pendword vault first' }]);
    const deliveries = async () =>
      (await call(t.adminToken, 'GET', `/api/deliveries?trigger_id=${trigger.id}`)).json().results as Array<{
        status: string;
        last_error: string | null;
      }>;
    await eventually('a refused attempt', async () =>
      (await deliveries())[0]?.last_error ? true : undefined,
    );
    // A second match, gathered until the cooldown ends.
    await ingest([{ app: 'vault', message: 'pendword vault gathered' }]);
    const stolen = await receiver();
    hooks.push(stolen);
    await ok(mallory.token, 'PATCH', `/api/channels/${channel}`, { config: { url: stolen.url } });
    refusing = false;
    expect(await deliveries()).toMatchObject([
      { status: 'failed', last_error: 'not sent: another user changed where the channel sends' },
    ]);
    await t.rt.services.triggers.load();
    await ingest([{ app: 'web', message: 'pendword public' }]);
    const got = await arrived(stolen, 'pendword public');
    expect(got).toEqual(['pendword public']);
    expect(stolen.got.map((g) => g.body).join('\n')).not.toContain('vault');
  });

  it('deliveries show their samples only to whom they were read for', async () => {
    const alices = await hook(alice, 'alice deliveries');
    const trigger = await ok(alice.token, 'POST', '/api/triggers', {
      name: 'alice deliveries watch',
      query: 'delword',
      cooldown_seconds: 0,
      notify: [alices.channel],
    });
    await ingest([{ app: 'vault', message: 'delword vault secret' }]);
    await arrived(alices.r, 'delword vault secret');
    const list = (token: string) => call(token, 'GET', `/api/deliveries?trigger_id=${trigger.id}`);
    const own = (await list(alice.token)).json();
    expect(own.count).toBe(1);
    expect(own.results[0]).toMatchObject({ payload: { count: 1 } });
    expect(own.results[0].payload.samples.map((s: Sample) => s.message)).toEqual(['delword vault secret']);
    const admin = (await list(t.adminToken)).json();
    expect(admin.results[0].payload.samples).toHaveLength(1);
    // mallory manages triggers and sees the delivery, but nothing it tells of the event.
    const theirs = await list(mallory.token);
    expect(theirs.statusCode, theirs.body).toBe(200);
    expect(theirs.json().count).toBe(1);
    expect(theirs.json().results[0]).toMatchObject({
      trigger_id: trigger.id,
      status: 'sent',
      payload: { withheld: true, samples: [], group: {}, count: null, search_url: null },
    });
    expect(theirs.body).not.toContain('vault secret');
    const all = await call(mallory.token, 'GET', '/api/deliveries?page_size=100');
    expect(all.body).not.toContain('vault secret');
    expect(own.results[0].run_as).toBe(alice.id);
  });

  it('a task a trigger opened lists to each reader only the events they may read', async () => {
    const trigger = await ok(alice.token, 'POST', '/api/triggers', {
      name: 'taskword watch',
      query: 'taskword',
      create_task: true,
      assign_to: carol.id,
    });
    await ingest([
      { app: 'vault', message: 'taskword vault' },
      { app: 'web', message: 'taskword web' },
    ]);
    const hidden = await idOf('taskword vault');
    const shown = await idOf('taskword web');
    const task = await eventually('the task', async () => {
      const res = await call(t.adminToken, 'GET', `/api/tasks?title=taskword`);
      return res.json().results[0] as { id: number; ev_ids: string[]; trigger_id: number } | undefined;
    });
    expect(task.trigger_id).toBe(trigger.id);
    expect([...task.ev_ids].sort()).toEqual([hidden, shown].sort());
    expect([...(await call(alice.token, 'GET', `/api/tasks/${task.id}`)).json().ev_ids].sort()).toEqual(
      [hidden, shown].sort(),
    );
    for (const who of [carol, mallory]) {
      const one = await call(who.token, 'GET', `/api/tasks/${task.id}`);
      expect(one.json().ev_ids).toEqual([shown]);
      const list = await call(who.token, 'GET', '/api/tasks?title=taskword');
      expect(list.json().results[0].ev_ids).toEqual([shown]);
      expect(list.body).not.toContain(hidden);
    }
    // The assignee changes the list: ids she is not shown stay (not hers to drop), unshown.
    const changed = await call(carol.token, 'PATCH', `/api/tasks/${task.id}`, { ev_ids: [shown, 'note-1'] });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().ev_ids).toEqual([shown, 'note-1']);
    expect((await call(alice.token, 'GET', `/api/tasks/${task.id}`)).json().ev_ids).toEqual([
      shown,
      'note-1',
      hidden,
    ]);
  });
});
