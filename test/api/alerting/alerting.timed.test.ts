/**
 * Alerting from outside: channels, threshold triggers that notify a real HTTP receiver
 * (signature and payload checked), Slack-shaped and SMTP notifications, retries against
 * a receiver that fails first, silence, and the deliveries list.
 */
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

/** A cluster node refuses threshold conditions (each node would count only its own events). */
const CLUSTER = Boolean(TEST_BUS_URL);
/** A cluster node judges a second 1.5 s after it ends, once every node's counts of it are in. */
const LAG = CLUSTER ? 1500 : 0;

const until = <T>(what: string, f: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> =>
  eventually(what, f, { withinMs: ms });

describe('alerting', () => {
  let t: TestApp;
  const mails: Array<{ from: string; to: string[]; data: string }> = [];
  let smtp: SMTPServer;
  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, session, callback) {
        let data = '';
        stream.on('data', (d) => {
          data += d;
        });
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            data,
          });
          callback();
        });
      },
    });
    await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', r));
    const port = (smtp.server.address() as AddressInfo).port;
    t = await createTestApp({
      LOGSCOPE_SMTP_URL: `smtp://127.0.0.1:${port}`,
      LOGSCOPE_SMTP_FROM: 'Logscope <alerts@example.test>',
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((r) => smtp.close(() => r()));
  });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    token?: string,
  ) => t.as(token ?? t.adminToken, { method, url, ...(payload ? { payload } : {}) });
  const ingest = (records: object[]) =>
    t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });

  it('keeps channels: validated per type, the secret write-only', async () => {
    const made = await call('POST', '/api/channels', {
      name: 'ops hook',
      type: 'webhook',
      config: { url: 'http://127.0.0.1:9/x', headers: { 'X-Team': 'ops' }, secret: 's3cret' },
    });
    expect(made.statusCode).toBe(201);
    expect(made.json()).toMatchObject({
      type: 'webhook',
      // Header values carry credentials (`Authorization`): write-only like the secret.
      config: { url: 'http://127.0.0.1:9/x', headers: { 'X-Team': '********' }, secret: '********' },
    });
    const id = made.json().id;
    // Sending the mask back keeps the secret; the read shows the mask again.
    const renamed = await call('PUT', `/api/channels/${id}`, {
      ...made.json(),
      name: 'ops',
      id: undefined,
      owner: undefined,
      decided_by: undefined,
      created_at: undefined,
      updated_at: undefined,
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().config.secret).toBe('********');
    const storedConfig = async (channelId: number) =>
      JSON.parse(
        (
          await t.rt.meta.db
            .selectFrom('channels')
            .select('config')
            .where('id', '=', channelId)
            .executeTakeFirstOrThrow()
        ).config,
      );
    expect(await storedConfig(id)).toEqual({
      url: 'http://127.0.0.1:9/x',
      headers: { 'X-Team': 'ops' },
      secret: 's3cret',
    });
    // A masked value with no stored one behind it is refused, not stored as the mask.
    const unknownMask = await call('PATCH', `/api/channels/${id}`, {
      config: { url: 'http://127.0.0.1:9/x', headers: { 'X-New': '********' } },
    });
    expect(unknownMask.statusCode).toBe(400);
    expect(unknownMask.json().errors).toHaveProperty(['config.headers.X-New']);

    // A Slack URL is the credential: only its origin is shown, and the shown form keeps it.
    const slackUrl = 'https://hooks.slack.com/services/T0000/B0000/abcdefghijklmnop';
    const slack = await call('POST', '/api/channels', {
      name: 'slack',
      type: 'slack',
      config: { url: slackUrl },
    });
    expect(slack.json().config).toEqual({ url: 'https://hooks.slack.com/********' });
    const kept = await call('PATCH', `/api/channels/${slack.json().id}`, {
      name: 'slack 2',
      config: slack.json().config,
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect(await storedConfig(slack.json().id)).toEqual({ url: slackUrl });
    expect(JSON.stringify((await call('GET', '/api/channels?show_all=true')).json())).not.toContain(
      'abcdefghijklmnop',
    );

    const bad = await call('POST', '/api/channels', {
      name: 'x',
      type: 'webhook',
      config: { url: 'ftp://example.com', headers: { 'Content-Type': 'text/plain' }, nope: 1 },
    });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().errors).sort()).toEqual([
      'config.headers.Content-Type',
      'config.nope',
      'config.url',
    ]);
    const mail = await call('POST', '/api/channels', {
      name: 'm',
      type: 'email',
      config: { to: ['not-an-address'] },
    });
    expect(mail.json().errors).toHaveProperty(['config.to[0]']);
    expect((await call('POST', '/api/channels', { name: 'm', type: 'pager', config: {} })).statusCode).toBe(
      400,
    );

    const other = await t.user('other');
    expect((await call('GET', `/api/channels/${id}`, undefined, other.token)).statusCode).toBe(404);
    expect((await call('DELETE', `/api/channels/${id}`)).statusCode).toBe(204);
  });

  it('tests a channel and says how it went, without hanging', async () => {
    const r = await receiver();
    const ok = (
      await call('POST', '/api/channels', { name: 'r', type: 'webhook', config: { url: r.url } })
    ).json();
    const res = await call('POST', `/api/channels/${ok.id}/test`);
    expect(res.json()).toMatchObject({ sent: true, error: null });
    expect(JSON.parse(r.got[0]?.body ?? '{}')).toMatchObject({ kind: 'test' });
    await r.close();
    const started = Date.now();
    const down = await call('POST', `/api/channels/${ok.id}/test`);
    expect(down.json()).toMatchObject({ sent: false, error: expect.stringMatching(/ECONNREFUSED/) });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('notifies a webhook within 2 s of the crossing, signed, once per crossing', async () => {
    const r = await receiver();
    const channel = (
      await call('POST', '/api/channels', {
        name: 'hook',
        type: 'webhook',
        config: { url: r.url, secret: 'k3y' },
      })
    ).json();
    const made = await call('POST', '/api/triggers', {
      name: 'Error burst',
      severity: 'high',
      query: 'burstword',
      condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 2, group_by: ['host'] },
      notify: [channel.id],
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({
      condition: { type: 'threshold', op: 'gt' },
      notify: [channel.id],
      cooldown_seconds: 300,
    });
    const trigger = made.json();

    await ingest([1, 2].map((i) => ({ host: 'web1', message: `burstword ${i}` })));
    await ingest([{ host: 'web2', message: 'burstword other host' }]);
    await new Promise((res) => setTimeout(res, 300));
    expect(r.got).toHaveLength(0); // 2 is not > 2, and web2 has 1
    const crossed = Date.now();
    await ingest([{ host: 'web1', message: 'burstword 3' }]);
    const hit = await until('the webhook', () => r.got[0]);
    expect(hit.at - crossed).toBeLessThan(2000 + LAG);

    const sig = `sha256=${createHmac('sha256', 'k3y').update(hit.body).digest('hex')}`;
    expect(hit.headers['x-logscope-signature']).toBe(sig);
    expect(hit.headers['content-type']).toBe('application/json');
    const payload = JSON.parse(hit.body);
    expect(payload).toMatchObject({
      kind: 'fire',
      trigger: { id: trigger.id, name: 'Error burst', severity: 'high' },
      group: { host: 'web1' },
      count: 3,
      window_seconds: 60,
    });
    expect(payload.samples.map((s: { message: string }) => s.message)).toEqual([
      'burstword 1',
      'burstword 2',
      'burstword 3',
    ]);
    const link = new URL(payload.search_url);
    expect(link.pathname).toBe('/search');
    expect(link.searchParams.get('q')).toBe('(burstword) AND host:"web1"');

    // Still over the value: no new notification (no flapping storm).
    await ingest([{ host: 'web1', message: 'burstword 4' }]);
    await new Promise((res) => setTimeout(res, 500));
    expect(r.got).toHaveLength(1);

    const deliveries = (await call('GET', `/api/deliveries?trigger_id=${trigger.id}`)).json();
    expect(deliveries.count).toBe(1);
    expect(deliveries.results[0]).toMatchObject({
      trigger_id: trigger.id,
      channel_id: channel.id,
      status: 'sent',
      attempts: 1,
      last_error: null,
      payload: { count: 3 },
    });
    // Threshold triggers record no match per event.
    await r.close();
  });

  it('counts every match as one group without group_by, and keeps samples short', async () => {
    // Issue 29: `group_by` was required; the triggers contract makes it optional (one count).
    const r = await receiver();
    const channel = (
      await call('POST', '/api/channels', { name: 'one', type: 'webhook', config: { url: r.url } })
    ).json();
    const made = await call('POST', '/api/triggers', {
      name: 'Any host',
      query: 'onecountword',
      condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 2 },
      notify: [channel.id],
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().condition).toMatchObject({ type: 'threshold', group_by: [] });
    await ingest([
      { host: 'a', message: 'onecountword 1' },
      { host: 'b', message: 'onecountword 2' },
      // A 64 KB message: its sample keeps 1,000 characters.
      { host: 'c', message: `onecountword 3 ${'z'.repeat(64_000)}` },
    ]);
    const hit = await until('the webhook', () => r.got[0]);
    const payload = JSON.parse(hit.body);
    expect(payload).toMatchObject({ kind: 'fire', group: {}, count: 3 });
    expect(payload.samples).toHaveLength(3);
    const long = payload.samples.find((s: { message: string }) => s.message.startsWith('onecountword 3'));
    expect(long.message).toHaveLength(1001);
    expect(long.message.endsWith('…')).toBe(true);
    await r.close();
  });

  it('retries a receiver that fails first, with the error in the list', async () => {
    let calls = 0;
    const r = await receiver(() => (++calls === 1 ? 503 : 200));
    const channel = (
      await call('POST', '/api/channels', { name: 'flaky', type: 'webhook', config: { url: r.url } })
    ).json();
    const trigger = (
      await call('POST', '/api/triggers', {
        name: 'each flakyword',
        query: 'flakyword',
        notify: [channel.id],
      })
    ).json();
    await ingest([{ message: 'flakyword' }]);
    await until('the first attempt', () => r.got[0]);
    const delivery = async (status: string) => {
      const d = (await call('GET', `/api/deliveries?trigger_id=${trigger.id}`)).json().results[0];
      return d?.status === status && d.attempts > 0 ? d : undefined;
    };
    const failed = await until('the failure recorded', () => delivery('pending'));
    // The receiver's answer is never repeated (a channel must not read internal pages).
    expect(failed).toMatchObject({ attempts: 1, last_error: 'HTTP 503' });
    expect(Date.parse(failed.next_attempt_at) - Date.parse(failed.created_at)).toBeLessThanOrEqual(5000);
    // The first retry comes within 5 s.
    await until('the retry', () => r.got[1], 7000);
    const sent = await until('sent', () => delivery('sent'));
    expect(sent).toMatchObject({ status: 'sent', attempts: 2 });
    await r.close();
  }, 20_000);

  it('sends Slack-shaped and email notifications', async () => {
    const r = await receiver();
    const slack = (
      await call('POST', '/api/channels', { name: 's', type: 'slack', config: { url: r.url } })
    ).json();
    const email = (
      await call('POST', '/api/channels', {
        name: 'e',
        type: 'email',
        config: { to: ['oncall@example.test'] },
      })
    ).json();
    await call('POST', '/api/triggers', {
      name: 'Disk full',
      query: 'diskword',
      notify: [slack.id, email.id],
    });
    await ingest([{ host: 'db1', message: 'diskword: no space left' }]);
    const hit = await until('slack', () => r.got[0]);
    const body = JSON.parse(hit.body);
    expect(Object.keys(body)).toEqual(['text']);
    expect(body.text).toContain('Disk full');
    expect(body.text).toContain('diskword: no space left');
    const mail = await until('the mail', () => mails[0]);
    expect(mail.to).toEqual(['oncall@example.test']);
    expect(mail.from).toBe('alerts@example.test');
    expect(mail.data).toMatch(/Subject: \[medium\] Disk full: 1 matching event/);
    // The body is quoted-printable: soft line breaks and =XX escapes undone.
    const text = mail.data
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
    expect(text).toContain('diskword: no space left');
    expect(text).toMatch(/Search: http:\/\/\S+\/search\?q=diskword/);
    await r.close();
  });

  it('notices silence within 5 s of the window’s end, and tells when it ends', async () => {
    const r = await receiver();
    const channel = (
      await call('POST', '/api/channels', { name: 'quiet', type: 'webhook', config: { url: r.url } })
    ).json();
    const made = Date.now();
    await call('POST', '/api/triggers', {
      name: 'Payments silent',
      query: 'app:payments',
      condition: { type: 'threshold', window_seconds: 2, op: 'lt', value: 1, group_by: [] },
      notify: [channel.id],
    });
    const hit = await until('silence', () => r.got[0], 10_000);
    expect(hit.at - made).toBeGreaterThanOrEqual(2000);
    expect(hit.at - made).toBeLessThan(2000 + 5000 + LAG);
    expect(JSON.parse(hit.body)).toMatchObject({
      kind: 'fire',
      count: 0,
      trigger: { name: 'Payments silent' },
    });
    // The source is back: the recovery is told too, at once (no cooldown for it).
    await ingest([{ app: 'payments', message: 'paid' }]);
    const back = await until('the recovery', () => r.got[1], 3000 + LAG);
    expect(JSON.parse(back.body)).toMatchObject({
      kind: 'recover',
      count: 1,
      trigger: { name: 'Payments silent' },
    });
    await r.close();
  });

  it('never slows ingest, or other channels, with a receiver that does not answer', async () => {
    const hung: Array<() => void> = [];
    const slow = createServer((req) => {
      // Reads the request and never answers (until the test ends).
      req.resume();
      hung.push(() => req.socket.destroy());
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/`;
    const channel = (
      await call('POST', '/api/channels', { name: 'hung', type: 'webhook', config: { url } })
    ).json();
    const trigger = (
      await call('POST', '/api/triggers', {
        name: 'each slowword',
        query: 'slowword',
        notify: [channel.id],
        cooldown_seconds: 0,
      })
    ).json();
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const res = await ingest([{ message: `slowword ${i}` }]);
      times.push(performance.now() - t0);
      expect(res.json()).toMatchObject({ accepted: 1 });
    }
    await until('the receiver to be waiting', () => (hung.length > 0 ? true : undefined));
    times.sort((a, b) => a - b);
    expect(times[times.length - 1]).toBeLessThan(1000);
    const pending = (await call('GET', `/api/deliveries?trigger_id=${trigger.id}&status=pending`)).json();
    expect(pending.count).toBeGreaterThan(0);
    // Nor other channels' notifications: they do not wait behind the hung ones.
    const r = await receiver();
    const fast = (
      await call('POST', '/api/channels', { name: 'fast', type: 'webhook', config: { url: r.url } })
    ).json();
    await call('POST', '/api/triggers', { name: 'each fastword', query: 'fastword', notify: [fast.id] });
    const sent = Date.now();
    await ingest([{ message: 'fastword' }]);
    const hit = await until('the fast receiver', () => r.got[0], 5000);
    expect(hit.at - sent).toBeLessThan(2000);
    await r.close();
    for (const end of hung) end();
    await new Promise<void>((r) => slow.close(() => r()));
  });

  it('still notifies the other channels of a trigger when one of them was deleted', async () => {
    const r = await receiver();
    const gone = (
      await call('POST', '/api/channels', { name: 'gone', type: 'slack', config: { url: r.url } })
    ).json();
    const kept = (
      await call('POST', '/api/channels', { name: 'kept', type: 'webhook', config: { url: r.url } })
    ).json();
    await call('POST', '/api/triggers', {
      name: 'each goneword',
      query: 'goneword',
      notify: [gone.id, kept.id],
    });
    expect((await call('DELETE', `/api/channels/${gone.id}`)).statusCode).toBe(204);
    await ingest([{ message: 'goneword' }]);
    const hit = await until('the kept channel', () => r.got[0]);
    expect(JSON.parse(hit.body)).toMatchObject({ kind: 'fire', trigger: { name: 'each goneword' } });
    await new Promise((res) => setTimeout(res, 300));
    expect(r.got).toHaveLength(1);
    await r.close();
  });

  it('refuses unknown channels and invalid conditions', async () => {
    const mine = await t.user('carol');
    const theirs = (
      await call('POST', '/api/channels', {
        name: 'admin only',
        type: 'slack',
        config: { url: 'http://127.0.0.1:9/' },
      })
    ).json();
    const res = await call(
      'POST',
      '/api/triggers',
      { name: 'x', query: 'y', notify: [theirs.id, 999_999] },
      mine.token,
    );
    expect(res.statusCode).toBe(400);
    expect(res.json().errors.notify[0]).toBe(`Unknown channels: ${theirs.id}, 999999.`);
    const bad = await call('POST', '/api/triggers', {
      name: 'x',
      query: 'y',
      condition: { type: 'threshold', window_seconds: 0, op: 'between', value: -1 },
    });
    expect(bad.statusCode).toBe(400);
    const badGroup = await call('POST', '/api/triggers', {
      name: 'x',
      query: 'y',
      condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 1, group_by: ['a b'] },
    });
    expect(badGroup.statusCode).toBe(400);
    const never = await call('POST', '/api/triggers', {
      name: 'x',
      query: 'y',
      condition: { type: 'threshold', window_seconds: 60, op: 'lt', value: 0, group_by: [] },
    });
    expect(never.statusCode).toBe(400);
    expect(never.json().errors['condition.value'][0]).toMatch(/above 0/);
    expect(Object.keys(badGroup.json().errors)).toEqual(['condition.group_by[0]']);
  });
});
