/**
 * The new_pattern condition (docs/api/alerting.md): a trigger fires once per pattern first seen after
 * its warm-up, with the template and the event, to a real webhook receiver; patterns seen
 * before, and those of its warm-up, stay quiet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

// A cluster node sends only what the notifier node matched; this runs on one process.
describe.skipIf(Boolean(TEST_BUS_URL))('new_pattern triggers', () => {
  let t: TestApp;
  let hook: Awaited<ReturnType<typeof receiver>>;
  const call = (method: 'POST' | 'GET', url: string, payload?: object) =>
    t.as(t.adminToken, { method, url, ...(payload ? { payload } : {}) });
  const ingest = async (records: object[]) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: records.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: records.length });
  };
  const now = () => Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    t = await createTestApp();
    hook = await receiver();
  });
  afterAll(async () => {
    await t?.close();
    await hook?.close();
  });

  it('fires once per pattern first seen after the warm-up, with its template and event', async () => {
    // Known before the trigger: its pattern is not new.
    await ingest([
      { app: 'sshd', message: 'Invalid user webmaster from 173.234.31.186', timestamp: now() - 60 },
    ]);
    const channel = (
      await call('POST', '/api/channels', { name: 'hook', type: 'webhook', config: { url: hook.url } })
    ).json();
    const made = await call('POST', '/api/triggers', {
      name: 'New kinds of sshd message',
      query: 'app:sshd',
      condition: { type: 'new_pattern', warmup_seconds: 0 },
      notify: [channel.id],
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().condition).toEqual({ type: 'new_pattern', warmup_seconds: 0 });
    await new Promise((r) => setTimeout(r, 1100));
    await ingest([{ app: 'sshd', message: 'Invalid user test9 from 52.80.34.196', timestamp: now() }]);
    await ingest([
      {
        app: 'sshd',
        message: 'Accepted publickey for deploy from 10.1.0.7 port 52114 ssh2',
        timestamp: now(),
      },
      { app: 'sshd', message: 'Accepted publickey for root from 10.1.0.8 port 52115 ssh2', timestamp: now() },
      { app: 'cron', message: 'A brand new cron line nobody matches', timestamp: now() },
    ]);
    const body = (await eventually('the notification', () => hook.got[0], { withinMs: 10_000 })).body;
    const n = JSON.parse(body);
    expect(n).toMatchObject({
      kind: 'fire',
      trigger: { name: 'New kinds of sshd message' },
      condition: { type: 'new_pattern' },
      count: 1,
      pattern: { template: 'Accepted publickey for <*> from <*> port <*> ssh2' },
    });
    expect(n.samples[0].message).toBe('Accepted publickey for deploy from 10.1.0.7 port 52114 ssh2');
    expect(n.search_url).toContain(
      encodeURIComponent(`pattern_id:${n.pattern.pattern_id}`).replace(/%20/g, '+'),
    );
    // The same pattern again, and an old one: nothing more.
    await ingest([
      { app: 'sshd', message: 'Accepted publickey for ops from 10.1.0.9 port 1 ssh2', timestamp: now() },
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hook.got).toHaveLength(1);
  });

  it('stays quiet during its warm-up', async () => {
    const before = hook.got.length;
    const channel = (
      await call('POST', '/api/channels', { name: 'hook2', type: 'webhook', config: { url: hook.url } })
    ).json();
    const made = await call('POST', '/api/triggers', {
      name: 'Still learning',
      query: 'app:nginx',
      condition: { type: 'new_pattern' },
      notify: [channel.id],
    });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json().condition).toEqual({ type: 'new_pattern', warmup_seconds: 3600 });
    await ingest([
      { app: 'nginx', message: 'upstream timed out while reading response header', timestamp: now() },
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(hook.got.length).toBe(before);
  });

  it('refuses a bad warm-up with a 400 naming it', async () => {
    const res = await call('POST', '/api/triggers', {
      name: 'bad',
      condition: { type: 'new_pattern', warmup_seconds: -1 },
    });
    expect(res.statusCode).toBe(400);
    expect(JSON.stringify(res.json().errors)).toContain('warmup_seconds');
  });
});
