/**
 * The on-call channel kinds from outside: PagerDuty, Opsgenie and Teams channels kept with
 * their keys write-only, tested, and notified of a threshold's firing and recovery, against
 * a loopback receiver that checks each vendor's documented request shape.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { oncallReceiver, type VendorRequest } from '../../helpers/oncall-receiver.js';

/** A cluster node judges a second 1.5 s after it ends. */
const LAG = TEST_BUS_URL ? 1500 : 0;

const until = <T>(what: string, f: () => T | undefined | Promise<T | undefined>, ms = 10_000): Promise<T> =>
  eventually(what, f, { withinMs: ms });

describe('on-call channels', () => {
  let t: TestApp;
  let vendor: Awaited<ReturnType<typeof oncallReceiver>>;
  /** Statuses to answer valid requests with, by routing key or API key (else 202). */
  const answers = new Map<string, number[]>();
  beforeAll(async () => {
    vendor = await oncallReceiver((r) => {
      const key = String(r.body.routing_key ?? r.headers.authorization ?? '');
      return answers.get(key)?.shift();
    });
    t = await createTestApp({
      LOGSCOPE_PAGERDUTY_URL: vendor.base,
      LOGSCOPE_OPSGENIE_URL: vendor.base,
    });
  });
  afterAll(async () => {
    await t?.close();
    await vendor?.close();
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
  const channel = async (type: string, config: object, token?: string) => {
    const res = await call('POST', '/api/channels', { name: type, type, config }, token);
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: number; config: Record<string, unknown> };
  };
  const of = (where: (r: VendorRequest) => boolean) => vendor.got.filter(where);
  const stored = async (id: number) =>
    JSON.parse(
      (
        await t.rt.meta.db
          .selectFrom('channels')
          .select('config')
          .where('id', '=', id)
          .executeTakeFirstOrThrow()
      ).config,
    );

  it('keeps each kind, validated, its keys and URL write-only', async () => {
    const pd = await channel('pagerduty', {
      routing_key: 'R0UTINGKEY0000000000000000000001',
      severity_map: { low: 'warning' },
    });
    expect(pd.config).toEqual({ routing_key: '********', severity_map: { low: 'warning' } });
    const og = await channel('opsgenie', {
      api_key: 'og-key-1',
      region: 'eu',
      priority_map: { critical: 'P2' },
    });
    expect(og.config).toEqual({ api_key: '********', region: 'eu', priority_map: { critical: 'P2' } });
    const teams = await channel('teams', { url: vendor.teamsUrl });
    expect(teams.config).toEqual({ url: `${vendor.base}/********` });
    const listed = JSON.stringify((await call('GET', '/api/channels?show_all=true')).json());
    for (const secret of ['R0UTINGKEY', 'og-key-1', 's3cr3tsig']) expect(listed).not.toContain(secret);
    expect(
      (await call('GET', '/api/channels?type=pagerduty')).json().results.map((c: { id: number }) => c.id),
    ).toContain(pd.id);

    // The masks sent back keep what is stored; a new value replaces it.
    for (const c of [pd, og, teams])
      expect(
        (await call('PATCH', `/api/channels/${c.id}`, { name: 'renamed', config: c.config })).statusCode,
      ).toBe(200);
    expect(await stored(pd.id)).toEqual({
      routing_key: 'R0UTINGKEY0000000000000000000001',
      severity_map: { low: 'warning' },
    });
    expect(await stored(og.id)).toMatchObject({ api_key: 'og-key-1' });
    expect(await stored(teams.id)).toEqual({ url: vendor.teamsUrl });
    await call('PATCH', `/api/channels/${og.id}`, { config: { api_key: 'og-key-2' } });
    expect(await stored(og.id)).toEqual({ api_key: 'og-key-2' });

    const bad = async (type: string, config: object) => {
      const res = await call('POST', '/api/channels', { name: 'bad', type, config });
      expect(res.statusCode, res.body).toBe(400);
      return Object.keys(res.json().errors).sort();
    };
    expect(
      await bad('pagerduty', { severity_map: { urgent: 'info', high: 'P1' }, url: 'http://x/' }),
    ).toEqual(['config.routing_key', 'config.severity_map.high', 'config.severity_map.urgent', 'config.url']);
    // A mask with nothing stored behind it is no key.
    expect(await bad('pagerduty', { routing_key: '********' })).toEqual(['config.routing_key']);
    expect(await bad('opsgenie', { api_key: 'k', region: 'asia', priority_map: { low: 'P9' } })).toEqual([
      'config.priority_map.low',
      'config.region',
    ]);
    expect(await bad('teams', { url: 'ftp://teams.example/' })).toEqual(['config.url']);

    // Another user's channel: not shown, not tested, not changed, not notified.
    const other = await t.user('oncall-other');
    expect((await call('GET', `/api/channels/${pd.id}`, undefined, other.token)).statusCode).toBe(404);
    expect((await call('POST', `/api/channels/${pd.id}/test`, undefined, other.token)).statusCode).toBe(404);
    expect((await call('PATCH', `/api/channels/${og.id}`, { name: 'x' }, other.token)).statusCode).toBe(404);
    const notify = await call(
      'POST',
      '/api/triggers',
      { name: 'x', query: 'y', notify: [teams.id] },
      other.token,
    );
    expect(notify.statusCode).toBe(400);
    expect(notify.json().errors).toHaveProperty('notify');
  });

  it('tests each kind: a PagerDuty trigger and resolve, an Opsgenie create and close, a card', async () => {
    const pd = await channel('pagerduty', { routing_key: 'testkey-pd' });
    const before = Date.now();
    const res = await call('POST', `/api/channels/${pd.id}/test`);
    expect(res.json(), res.body).toMatchObject({ sent: true, error: null });
    const events = of((r) => r.body.routing_key === 'testkey-pd');
    expect(events.map((e) => [e.body.event_action, e.problems])).toEqual([
      ['trigger', []],
      ['resolve', []],
    ]);
    const key = String(events[0]?.body.dedup_key);
    expect(key).toMatch(new RegExp(`^logscope-test-${pd.id}-\\d+$`));
    expect(Number(key.split('-').pop())).toBeGreaterThanOrEqual(before);
    expect(events[1]?.body).toEqual({ routing_key: 'testkey-pd', event_action: 'resolve', dedup_key: key });
    expect(events[0]?.body.payload).toMatchObject({
      summary: expect.stringMatching(/^Logscope test notification/),
      severity: 'info',
    });

    const og = await channel('opsgenie', { api_key: 'testkey-og' });
    expect((await call('POST', `/api/channels/${og.id}/test`)).json()).toMatchObject({ sent: true });
    const alerts = of((r) => r.headers.authorization === 'GenieKey testkey-og');
    expect(alerts.map((a) => [a.path, a.problems])).toEqual([
      ['/v2/alerts', []],
      [`/v2/alerts/${alerts[0]?.body.alias}/close`, []],
    ]);
    expect(alerts[0]?.body).toMatchObject({
      alias: expect.stringMatching(new RegExp(`^logscope-test-${og.id}-\\d+$`)),
      priority: 'P5',
      source: 'Logscope',
      tags: ['logscope'],
    });
    expect(alerts[1]?.query.get('identifierType')).toBe('alias');
    expect(alerts[1]?.body).toMatchObject({ source: 'Logscope' });

    const teams = await channel('teams', { url: `${vendor.base}/teams/test-card` });
    expect((await call('POST', `/api/channels/${teams.id}/test`)).json()).toMatchObject({ sent: true });
    const card = of((r) => r.path === '/teams/test-card')[0];
    expect(card?.problems).toEqual([]);
    expect(JSON.stringify(card?.body)).toContain('Logscope test notification');

    // A vendor that refuses the request: the outcome says so.
    answers.set('testkey-refused', [401]);
    const refused = await channel('pagerduty', { routing_key: 'testkey-refused' });
    expect((await call('POST', `/api/channels/${refused.id}/test`)).json()).toMatchObject({
      sent: false,
      error: 'HTTP 401',
    });
  });

  it('triggers and resolves, creates and closes, and cards a threshold firing and its recovery', async () => {
    const pd = await channel('pagerduty', { routing_key: 'fire-pd', severity_map: { high: 'critical' } });
    const og = await channel('opsgenie', { api_key: 'fire-og' });
    const teams = await channel('teams', { url: `${vendor.base}/teams/fire` });
    const made = await call('POST', '/api/triggers', {
      name: 'API errors',
      severity: 'high',
      query: 'oncallburst',
      condition: { type: 'threshold', window_seconds: 2, op: 'gt', value: 1, group_by: ['host'] },
      notify: [pd.id, og.id, teams.id],
      cooldown_seconds: 0,
    });
    expect(made.statusCode, made.body).toBe(201);
    const trigger = made.json();
    await ingest([1, 2].map((i) => ({ host: 'web-1', message: `oncallburst ${i}` })));

    const pdEvents = () => of((r) => r.body.routing_key === 'fire-pd');
    const [fired, resolved] = await until(
      'trigger and resolve',
      () => (pdEvents().length >= 2 ? pdEvents() : undefined),
      10_000 + LAG,
    );
    const key = `logscope-${trigger.id}-${createHash('sha256').update('{"host":"web-1"}').digest('hex').slice(0, 32)}`;
    expect(fired?.problems).toEqual([]);
    expect(fired?.body).toMatchObject({
      event_action: 'trigger',
      dedup_key: key,
      payload: {
        summary: expect.stringContaining('API errors'),
        source: 'host=web-1',
        severity: 'critical',
        class: 'threshold',
        custom_details: {
          trigger: { id: trigger.id, name: 'API errors' },
          group: { host: 'web-1' },
          count: 2,
        },
      },
      links: [{ href: expect.stringContaining('/search?') }],
      client: 'Logscope',
    });
    expect(resolved?.body).toEqual({ routing_key: 'fire-pd', event_action: 'resolve', dedup_key: key });

    const ogRequests = () => of((r) => r.headers.authorization === 'GenieKey fire-og');
    const [created, closed] = await until('create and close', () =>
      ogRequests().length >= 2 ? ogRequests() : undefined,
    );
    expect(created?.problems).toEqual([]);
    expect(created?.body).toMatchObject({
      alias: key,
      priority: 'P2',
      entity: 'host=web-1',
      details: { host: 'web-1', trigger: 'API errors', count: '2', window_seconds: '2' },
    });
    expect(closed?.path).toBe(`/v2/alerts/${key}/close`);
    expect(closed?.problems).toEqual([]);

    const cards = () => of((r) => r.path === '/teams/fire');
    const [fireCard, backCard] = await until('two cards', () => (cards().length >= 2 ? cards() : undefined));
    expect(fireCard?.problems).toEqual([]);
    expect(JSON.stringify(fireCard?.body)).not.toContain('Resolved');
    expect(JSON.stringify(backCard?.body)).toContain('Resolved');

    // Each a delivery of its own: the firing's and the recovery's. A delivery is marked sent
    // once its answer is read, which may be after the receiver saw the request.
    const sent = (d: { count: number; results: Array<{ status: string }> }) =>
      d.count === 6 && d.results.every((x) => x.status === 'sent');
    const deliveries = await until('six deliveries sent', async () => {
      const d = (await call('GET', `/api/deliveries?trigger_id=${trigger.id}`)).json();
      return sent(d) ? d : undefined;
    });
    expect(deliveries.count).toBe(6);
    expect(deliveries.results.map((d: { channel_type: string }) => d.channel_type).sort()).toEqual([
      'opsgenie',
      'opsgenie',
      'pagerduty',
      'pagerduty',
      'teams',
      'teams',
    ]);
  }, 30_000);

  it('sends a recovery after its firing, and gives up at once on a refused request', async () => {
    // The firing's first attempt fails: its recovery waits for the retry.
    answers.set('order-pd', [503]);
    answers.set('refused-pd', [400, 400]);
    const pd = await channel('pagerduty', { routing_key: 'order-pd' });
    const refused = await channel('pagerduty', { routing_key: 'refused-pd' });
    const trigger = (
      await call('POST', '/api/triggers', {
        name: 'ordered',
        query: 'oncallorder',
        condition: { type: 'threshold', window_seconds: 1, op: 'gt', value: 0 },
        notify: [pd.id, refused.id],
        cooldown_seconds: 0,
      })
    ).json();
    await ingest([{ message: 'oncallorder' }]);
    const events = () => of((r) => r.body.routing_key === 'order-pd');
    const seen = await until('the resolve', () => (events().length >= 3 ? events() : undefined), 15_000);
    expect(seen.map((e) => [e.body.event_action, e.status])).toEqual([
      ['trigger', 503],
      ['trigger', 202],
      ['resolve', 202],
    ]);
    expect(seen[0]?.body.dedup_key).toBe(`logscope-${trigger.id}`);
    const refusedDeliveries = (await call('GET', `/api/deliveries?channel_id=${refused.id}`)).json().results;
    expect(
      refusedDeliveries.map((d: { status: string; attempts: number }) => [d.status, d.attempts]),
    ).toEqual([
      ['failed', 1],
      ['failed', 1],
    ]);
  }, 30_000);

  it('sends match triggers as PagerDuty triggers only, keyed by the trigger', async () => {
    const pd = await channel('pagerduty', { routing_key: 'match-pd' });
    const trigger = (
      await call('POST', '/api/triggers', { name: 'each oncallmatch', query: 'oncallmatch', notify: [pd.id] })
    ).json();
    await ingest([{ host: 'db-1', message: 'oncallmatch' }]);
    const event = await until('the trigger event', () => of((r) => r.body.routing_key === 'match-pd')[0]);
    expect(event.problems).toEqual([]);
    expect(event.body).toMatchObject({
      event_action: 'trigger',
      dedup_key: `logscope-${trigger.id}`,
      payload: { severity: 'warning', class: 'match' },
    });
    // Without group_by the source is the server's public host.
    const body = event.body as { payload: { source: string }; client_url: string };
    expect(body.payload.source).toBe(new URL(body.client_url).host);
  });
});
