/**
 * What leaves the service is decided by someone who may read it (issue 73, ADR 0034): each
 * finding of the third security review, from the account that should be refused. Stream
 * Vault (`app:vault`) is read by alice only; mallory holds manage_triggers and reads Default.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

type Who = { id: number; token: string };
type Hook = Awaited<ReturnType<typeof receiver>>;

describe(`what leaves the service (${BACKEND})`, () => {
  let t: TestApp;
  let alice: Who;
  let mallory: Who;
  const hooks: Hook[] = [];
  const call = (
    token: string | null,
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => t.as(token, { method, url, ...(payload ? { payload } : {}) });
  const ok = async (token: string, method: 'POST' | 'PATCH', url: string, payload: object) => {
    const res = await call(token, method, url, payload);
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const hook = async () => {
    const r = await receiver();
    hooks.push(r);
    return r;
  };
  /** A schedule of alice's over her Vault events delivering to `channel`; runs it now. */
  const aliceRun = async (channel: number) => {
    const search = await ok(alice.token, 'POST', '/api/saved-searches', {
      title: 'Vault',
      query: 'app:vault',
    });
    const s = await ok(alice.token, 'POST', '/api/schedules', {
      name: 'Vault daily',
      source: { saved_search_id: search.id },
      format: 'csv',
      cron: '0 9 * * *',
      deliver_to: [channel],
    });
    expect((await call(alice.token, 'POST', `/api/schedules/${s.id}/run`)).statusCode).toBe(202);
    await t.rt.services.scheduleRunner.idle();
    return (await call(alice.token, 'GET', `/api/schedules/${s.id}`)).json();
  };
  const linkIn = (body: string) => /"link":"([^"]+)"/.exec(body)?.[1];
  const pathOf = (url: string) => url.replace('http://logs.example.test', '');

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_PUBLIC_URL: 'http://logs.example.test' });
    alice = await t.user('alice');
    mallory = await t.user('mallory', { permissions: ['manage_triggers'] });
    const vault = await call(t.adminToken, 'POST', '/api/streams', {
      title: 'Vault',
      rule: 'app:vault',
      readers: { users: [alice.id] },
    });
    expect(vault.statusCode, vault.body).toBe(201);
    await call(t.adminToken, 'POST', '/api/ingest', {
      app: 'vault',
      message: 'vault secret row',
    });
  });
  afterAll(async () => {
    await t?.close();
    for (const r of hooks) await r.close();
  });

  it('a delivery keeps no link: not in anyone’s deliveries list, administrators’ included', async () => {
    const r = await hook();
    const channel = await ok(alice.token, 'POST', '/api/channels', {
      name: 'alice reports',
      type: 'webhook',
      config: { url: r.url },
    });
    const s = await aliceRun(channel.id);
    expect(s.last_run.status, JSON.stringify(s.last_run)).toBe('ok');
    // The recipient got a working link, made when it was sent.
    const sent = linkIn(r.got[0]?.body ?? '');
    expect(sent).toMatch(/\/api\/reports\/\d+\/file\?exp=\d+&sig=/);
    const file = await call(null, 'GET', pathOf(sent as string));
    expect(file.statusCode).toBe(200);
    expect(file.body).toContain('vault secret row');
    for (const token of [mallory.token, alice.token, t.adminToken]) {
      const list = await call(token, 'GET', `/api/deliveries?schedule_id=${s.id}`);
      expect(list.statusCode).toBe(200);
      expect(list.json().count).toBe(1);
      expect(list.body).not.toMatch(/sig=|"link"/);
    }
    // The link is recorded, audited and revocable on its own.
    const links = (await call(alice.token, 'GET', `/api/reports/${s.last_run.report_id}/links`)).json();
    expect(links.results).toHaveLength(1);
    expect(links.results[0]).toMatchObject({ delivery_id: expect.any(Number), revoked_at: null });
    expect((await call(mallory.token, 'GET', `/api/reports/${s.last_run.report_id}/links`)).statusCode).toBe(
      404,
    );
    const audit = await call(t.adminToken, 'GET', '/api/audit?action=report.link');
    expect(audit.json().results[0]).toMatchObject({
      actor: { user_id: alice.id },
      target: { kind: 'report', id: String(s.last_run.report_id) },
      detail: { via: 'delivery', link_id: links.results[0].id },
    });
  });

  it('a schedule does not send where another user decided, unless they may read all it holds', async () => {
    const own = await hook();
    const stolen = await hook();
    const channel = await ok(alice.token, 'POST', '/api/channels', {
      name: 'alice mail hook',
      type: 'webhook',
      config: { url: own.url },
    });
    await ok(mallory.token, 'PATCH', `/api/channels/${channel.id}`, { config: { url: stolen.url } });
    const s = await aliceRun(channel.id);
    expect(s.last_run.status).toBe('failed');
    expect(s.last_run.error).toBe(
      `channel ${channel.id}: not sent: user mallory, who set where it goes, may not read everything it holds`,
    );
    expect(stolen.got).toHaveLength(0);
    expect(own.got).toHaveLength(0);
    const list = (await call(alice.token, 'GET', `/api/deliveries?schedule_id=${s.id}`)).json();
    expect(list.results[0]).toMatchObject({ status: 'failed', attempts: 1 });
    // An administrator may read everything: where one sets it, it is sent.
    await ok(t.adminToken, 'PATCH', `/api/channels/${channel.id}`, { config: { url: own.url } });
    const again = await call(alice.token, 'POST', `/api/schedules/${s.id}/run`);
    expect(again.statusCode).toBe(202);
    await t.rt.services.scheduleRunner.idle();
    expect((await call(alice.token, 'GET', `/api/schedules/${s.id}`)).json().last_run.status).toBe('ok');
    expect(own.got).toHaveLength(1);
  });

  it('credentials stay with their destination: a new origin, kind or editor needs them again', async () => {
    const made = await ok(alice.token, 'POST', '/api/channels', {
      name: 'alice keyed',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/a', headers: { 'X-Api-Key': 'alice-key' }, secret: 's3cret' },
    });
    const masked = { 'X-Api-Key': '********' };
    const refusedBy = async (token: string, config: object, type?: string) => {
      const res = await call(token, 'PATCH', `/api/channels/${made.id}`, {
        config,
        ...(type ? { type } : {}),
      });
      expect(res.statusCode, res.body).toBe(400);
      return res.json().errors as Record<string, string[]>;
    };
    // Another editor (a manage_triggers holder, an administrator), even to the same URL.
    for (const token of [mallory.token, t.adminToken]) {
      const errors = await refusedBy(token, {
        url: 'http://127.0.0.1:9/a',
        headers: masked,
        secret: '********',
      });
      expect(Object.keys(errors).sort()).toEqual(['config.headers.X-Api-Key', 'config.secret']);
      expect(errors['config.secret']?.[0]).toMatch(/give the value again.*you did not set where/i);
    }
    // The owner, to another origin.
    const moved = await refusedBy(alice.token, {
      url: 'http://127.0.0.2:9/a',
      headers: masked,
      secret: '********',
    });
    expect(moved['config.headers.X-Api-Key']?.[0]).toMatch(/origin changed/);
    // The owner, on the same origin: kept.
    const kept = await call(alice.token, 'PATCH', `/api/channels/${made.id}`, {
      config: { url: 'http://127.0.0.1:9/b', headers: masked, secret: '********' },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(kept.json().config).toMatchObject({ headers: masked, secret: '********' });
    // Given again, another editor may set them: the values are theirs then.
    const given = await call(mallory.token, 'PATCH', `/api/channels/${made.id}`, {
      config: { url: 'http://127.0.0.1:9/c', headers: { 'X-Api-Key': 'mallory-key' } },
    });
    expect(given.statusCode, given.body).toBe(200);
    // A routing key across editors.
    const pd = await ok(alice.token, 'POST', '/api/channels', {
      name: 'alice pd',
      type: 'pagerduty',
      config: { routing_key: 'alice-routing' },
    });
    const pdRes = await call(mallory.token, 'PATCH', `/api/channels/${pd.id}`, {
      config: { routing_key: '********' },
    });
    expect(Object.keys(pdRes.json().errors)).toEqual(['config.routing_key']);
  });

  it('links are audited, revoked one by one, and stop while their owner is disabled', async () => {
    const r = await hook();
    const channel = await ok(alice.token, 'POST', '/api/channels', {
      name: 'alice links',
      type: 'webhook',
      config: { url: r.url },
    });
    const s = await aliceRun(channel.id);
    const report = s.last_run.report_id as number;
    const one = await ok(alice.token, 'POST', `/api/reports/${report}/link`, { expires_in: 3600 });
    const two = await ok(alice.token, 'POST', `/api/reports/${report}/link`, { expires_in: 3600 });
    expect(one.id).not.toBe(two.id);
    expect(one.url).not.toBe(two.url);
    const audit = (await call(t.adminToken, 'GET', '/api/audit?action=report.link')).json().results;
    expect(audit[0]).toMatchObject({
      actor: { user_id: alice.id },
      detail: { via: 'request', link_id: two.id },
    });
    expect((await call(null, 'GET', pathOf(one.url))).statusCode).toBe(200);
    expect((await call(alice.token, 'DELETE', `/api/reports/${report}/links/${one.id}`)).statusCode).toBe(
      204,
    );
    const revoked = await call(null, 'GET', pathOf(one.url));
    expect(revoked.statusCode).toBe(403);
    expect(revoked.json().code).toBe('link_revoked');
    expect((await call(null, 'GET', pathOf(two.url))).statusCode).toBe(200);
    expect((await call(mallory.token, 'DELETE', `/api/reports/${report}/links/${two.id}`)).statusCode).toBe(
      404,
    );
    const revokes = (await call(t.adminToken, 'GET', '/api/audit?action=report.link_revoke')).json().results;
    expect(revokes.map((a: { outcome: string }) => a.outcome).sort()).toEqual(['error', 'ok']);
    // The owner disabled: every link stops; enabled again, they work again.
    await ok(t.adminToken, 'PATCH', `/api/users/${alice.id}`, { disabled: true });
    expect((await call(null, 'GET', pathOf(two.url))).statusCode).toBe(403);
    const delivered = linkIn(r.got[0]?.body ?? '') as string;
    expect((await call(null, 'GET', pathOf(delivered))).statusCode).toBe(403);
    await ok(t.adminToken, 'PATCH', `/api/users/${alice.id}`, { disabled: false });
    expect((await call(null, 'GET', pathOf(two.url))).statusCode).toBe(200);
  });

  it('a disabled owner’s schedules pause: a due slot passes without a run', async () => {
    // Disabling a user ends their tokens: a user of this test's own.
    const paula = await t.user('paula');
    const r = await hook();
    const channel = await ok(paula.token, 'POST', '/api/channels', {
      name: 'alice paused',
      type: 'webhook',
      config: { url: r.url },
    });
    const search = await ok(paula.token, 'POST', '/api/saved-searches', { title: 'Paused', query: '' });
    const s = await ok(paula.token, 'POST', '/api/schedules', {
      name: 'Paused',
      source: { saved_search_id: search.id },
      format: 'csv',
      cron: '* * * * *',
      deliver_to: [channel.id],
    });
    await ok(t.adminToken, 'PATCH', `/api/users/${paula.id}`, { disabled: true });
    const due = async () => {
      await t.rt.meta.db
        .updateTable('schedules')
        .set({ next_run_at: Date.now() - 1000 })
        .where('id', '=', s.id)
        .execute();
      await t.rt.services.scheduleRunner.tick();
      await t.rt.services.scheduleRunner.idle();
      return (await call(t.adminToken, 'GET', `/api/schedules/${s.id}`)).json();
    };
    const paused = await due();
    expect(paused.last_run).toBeNull();
    expect(Date.parse(paused.next_run_at)).toBeGreaterThan(Date.now());
    await ok(t.adminToken, 'PATCH', `/api/users/${paula.id}`, { disabled: false });
    const resumed = await due();
    expect(resumed.last_run).toMatchObject({ trigger: 'cron' });
  });

  it('a disabled user’s triggers pause, and run again once they are enabled', async () => {
    const tara = await t.user('tara');
    const running = async () => {
      const text = (await call(t.adminToken, 'GET', '/metrics')).body;
      return Number(/^logscope_triggers_enabled (\d+)$/m.exec(text)?.[1]);
    };
    const before = await running();
    // A `lt` threshold fires on silence: matching nothing would not keep it quiet.
    await ok(tara.token, 'POST', '/api/triggers', {
      name: 'tara silence',
      query: 'taraword',
      condition: { type: 'threshold', window_seconds: 60, op: 'lt', value: 1, group_by: [] },
    });
    await eventually('the trigger loaded', async () => ((await running()) === before + 1 ? true : undefined));
    await ok(t.adminToken, 'PATCH', `/api/users/${tara.id}`, { disabled: true });
    await eventually('the trigger paused', async () => ((await running()) === before ? true : undefined));
    await ok(t.adminToken, 'PATCH', `/api/users/${tara.id}`, { disabled: false });
    await eventually('the trigger back', async () => ((await running()) === before + 1 ? true : undefined));
  });

  it('a notification is sent only while whoever decided it may still read what it names', async () => {
    const vera = await t.user('vera');
    const stream = await ok(t.adminToken, 'POST', '/api/streams', {
      title: 'Vera',
      rule: 'app:vera',
      readers: { users: [vera.id] },
    });
    let refusing = true;
    const r = await receiver(() => (refusing ? 503 : 200));
    hooks.push(r);
    const channel = await ok(vera.token, 'POST', '/api/channels', {
      name: 'vera hook',
      type: 'webhook',
      config: { url: r.url },
    });
    const trigger = await ok(vera.token, 'POST', '/api/triggers', {
      name: 'vera watch',
      query: 'veraword',
      cooldown_seconds: 0,
      notify: [channel.id],
    });
    await call(t.adminToken, 'POST', '/api/ingest', { app: 'vera', message: 'veraword kept' });
    await t.rt.services.triggers.idle();
    const delivery = async () =>
      (await call(t.adminToken, 'GET', `/api/deliveries?trigger_id=${trigger.id}`)).json().results[0];
    await eventually('a refused first attempt', async () =>
      (await delivery())?.attempts >= 1 ? true : undefined,
    );
    // Vera may no longer read her stream: the retry must not send what she read before.
    await ok(t.adminToken, 'PATCH', `/api/streams/${stream.id}`, { readers: { users: [] } });
    refusing = false;
    const failed = await eventually(
      'the retry refused',
      async () => {
        const d = await delivery();
        return d?.status === 'failed' ? d : undefined;
      },
      { withinMs: 15_000 },
    );
    expect(failed.last_error).toBe(
      'not sent: user vera, who decided it, may no longer read an event it names',
    );
    expect(r.got.filter((g) => g.body.includes('veraword kept'))).toHaveLength(1);
  });

  it('a channel test is audited', async () => {
    const made = await ok(mallory.token, 'POST', '/api/channels', {
      name: 'mallory test',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/' },
    });
    const res = await call(mallory.token, 'POST', `/api/channels/${made.id}/test`);
    expect(res.json()).toMatchObject({ sent: false, error: 'failed' });
    const audit = (await call(t.adminToken, 'GET', '/api/audit?action=channel.test')).json().results;
    expect(audit[0]).toMatchObject({
      actor: { user_id: mallory.id },
      target: { kind: 'channel', id: String(made.id) },
      detail: { sent: false },
    });
  });
});
