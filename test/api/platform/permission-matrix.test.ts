import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, type Permission } from '../../../src/shared/permissions.js';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';
import { Client, type Msg } from '../../helpers/ws-client.js';

/**
 * The authorisation matrix (issue #54): for every permission, a user holding only it and
 * no access to the restricted stream reads none of its events through any feature that
 * carries event data. The restricted stream Vault (`tier:restricted OR host:zqvaulthost`)
 * is read by an admin-only team; its events carry the marker `zqvault` in their app, host,
 * message and the value of a field of their own (`vault_key`), so any leak of their content shows as the marker (and
 * of their ids as an id). Default (everything else) is read by everyone. The last rows
 * show what the admin-level permissions (docs/access.md) can do: change what they read.
 */
const MARK = 'zqvault';
const LAST_HOUR = { preset: 'last_hour' };
type Holder = Permission | 'none';
const HOLDERS: readonly Holder[] = ['none', ...PERMISSIONS];
type Who = { id: number; token: string };
type Row = { ev_id: string; message: string; app: string; pattern_id: string };

describe(`the permission matrix: what a holder without stream access reads (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  let wsUrl: string;
  const users = new Map<Holder, Who>();
  const secretIds: string[] = [];
  let publicId: string;
  let secretPattern: string;
  let sharedPattern: string;
  let vault: number;
  let vaultTeam: number;
  let adminQuery: string;
  let adminDashboard: number;
  let adminWidget: number;
  let adminTask: number;
  let privateSearch: number;
  let builtinPipeline: number;
  let ctl: Awaited<ReturnType<typeof receiver>>;
  let leak: Awaited<ReturnType<typeof receiver>>;

  const call = (token: string, method: InjectOptions['method'], url: string, payload?: unknown) =>
    t.as(token, { method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const holder = (h: Holder) => users.get(h) as Who;
  /** A query's answer once computed (a query not done within a second answers `202` first). */
  const query = async (token: string, type: string, params: object = {}) => {
    const res = await call(token, 'POST', '/api/query', {
      type,
      params: { time_range: LAST_HOUR, ...params },
    });
    if (res.statusCode !== 202) return res;
    const id = res.json().query_id as string;
    return eventually(`the ${type} query done`, async () => {
      const read = await call(token, 'GET', `/api/query/${id}`);
      return ['SUCCESS', 'ERROR'].includes(read.json().status) ? read : undefined;
    });
  };
  /** The body holds no restricted event's content (the marker) and no restricted event's id. */
  const clean = (label: string, body: string) => {
    const at = body.indexOf(MARK);
    expect(at, `${label}: …${body.slice(Math.max(0, at - 120), at + 80)}…`).toBe(-1);
    for (const id of secretIds)
      expect(body.includes(id), `${label}: holds restricted ev_id ${id}`).toBe(false);
  };
  const ingest = async (lines: object[]) => {
    const res = await call(t.adminToken, 'POST', '/api/ingest', lines);
    expect(res.statusCode, res.body).toBe(200);
  };
  const adminSearch = async (q: string): Promise<Row[]> => {
    const res = await query(t.adminToken, 'Search', { query: q, page_size: 100 });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.events;
  };
  /** Every message a websocket subscription gets within a short while, after its first answer. */
  const subscribe = async (token: string, target: object): Promise<Msg[]> => {
    const c = await Client.open(`${wsUrl}?token=${token}`);
    try {
      c.send(['subscribe', target]);
      await c.next((m) => m[0] === 'widget-update' || m[0] === 'error', 5000).then((m) => c.messages.push(m));
      await new Promise((r) => setTimeout(r, 300));
      return [...c.messages];
    } finally {
      c.ws.close();
    }
  };

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_TOKEN_CACHE_SECONDS: '1' });
    ctl = await receiver();
    leak = await receiver();
    const me = (await call(t.adminToken, 'GET', '/api/users/me')).json();
    const team = await call(t.adminToken, 'POST', '/api/teams', { name: 'vault-keepers', members: [me.id] });
    expect(team.statusCode, team.body).toBe(201);
    vaultTeam = team.json().id;
    const made = await call(t.adminToken, 'POST', '/api/streams', {
      title: 'Vault',
      rule: 'tier:restricted OR host:zqvaulthost',
      readers: { teams: [vaultTeam] },
    });
    expect(made.statusCode, made.body).toBe(201);
    vault = made.json().id;
    for (const h of HOLDERS) users.set(h, await t.user(`h_${h}`, h === 'none' ? {} : { permissions: [h] }));

    // The admin's own things, over the restricted stream: a trigger that opens tasks and
    // notifies (the control: it must fire), one a manage_triggers holder will point at
    // their own channel, a query, a dashboard with a widget, a private saved search.
    const adminChannel = await call(t.adminToken, 'POST', '/api/channels', {
      name: 'admin hook',
      type: 'webhook',
      config: { url: ctl.url },
    });
    expect(adminChannel.statusCode, adminChannel.body).toBe(201);
    const control = await call(t.adminToken, 'POST', '/api/triggers', {
      name: 'vault watch',
      query: 'tier:restricted',
      create_task: true,
      notify: [adminChannel.json().id],
    });
    expect(control.statusCode, control.body).toBe(201);
    // A trigger over the restricted stream sending to a channel of the admin's that a
    // manage_triggers holder may re-point at their own receiver.
    const redirected = await call(t.adminToken, 'POST', '/api/channels', {
      name: 'admin hook 2',
      type: 'webhook',
      config: { url: ctl.url },
    });
    expect(redirected.statusCode, redirected.body).toBe(201);
    const watched = await call(t.adminToken, 'POST', '/api/triggers', {
      name: 'victim channel',
      query: 'tier:restricted',
      notify: [redirected.json().id],
    });
    expect(watched.statusCode, watched.body).toBe(201);
    const victim = await call(t.adminToken, 'POST', '/api/triggers', {
      name: 'victim',
      query: 'app:cron',
      notify: [adminChannel.json().id],
    });
    expect(victim.statusCode, victim.body).toBe(201);
    const board = await call(t.adminToken, 'POST', '/api/dashboards', {
      title: 'Everything',
      widgets: [{ title: 'All events', query: { type: 'Search', params: { time_range: LAST_HOUR } } }],
    });
    expect(board.statusCode, board.body).toBe(201);
    adminDashboard = board.json().id;
    adminWidget = board.json().widgets[0].id;
    const saved = await call(t.adminToken, 'POST', '/api/saved-searches', {
      title: 'zqvault private view',
      query: 'tier:restricted',
    });
    expect(saved.statusCode, saved.body).toBe(201);
    privateSearch = saved.json().id;
    const pipelines = (await call(t.adminToken, 'GET', '/api/pipelines')).json();
    builtinPipeline = pipelines.results[0].id;

    // Each holder: a webhook channel of their own and a trigger over everything they may
    // read (it fires on the public events: the row's positive control).
    for (const h of HOLDERS) {
      const who = holder(h);
      const ch = await call(who.token, 'POST', '/api/channels', {
        name: `hook ${h}`,
        type: 'webhook',
        config: { url: leak.url },
      });
      expect(ch.statusCode, ch.body).toBe(201);
      const tr = await call(who.token, 'POST', '/api/triggers', {
        name: `holder ${h}`,
        query: 'tier:restricted OR app:web OR app:billing',
        create_task: true,
        notify: [ch.json().id],
      });
      expect(tr.statusCode, tr.body).toBe(201);
      // The other conditions: a count over a window (its samples and group) and a new
      // pattern (its template and event); the restricted events' patterns are new too.
      for (const [kind, condition] of [
        ['threshold', { type: 'threshold', window_seconds: 60, op: 'gte', value: 1, group_by: ['host'] }],
        ['new_pattern', { type: 'new_pattern', warmup_seconds: 0 }],
      ] as const) {
        const more = await call(who.token, 'POST', '/api/triggers', {
          name: `holder ${h} ${kind}`,
          query: 'tier:restricted OR app:web OR app:billing',
          condition,
          notify: [ch.json().id],
        });
        expect(more.statusCode, more.body).toBe(201);
      }
      // Someone else's trigger: a manage_triggers holder may change it; it must not then
      // match with its owner's rights and send to the holder.
      await call(who.token, 'PATCH', `/api/triggers/${victim.json().id}`, {
        query: 'tier:restricted OR app:billing',
        notify: [ch.json().id],
      });
      await call(who.token, 'PATCH', `/api/channels/${redirected.json().id}`, {
        config: { url: leak.url },
      });
    }

    await ingest([
      { app: 'web', host: 'web1', message: 'public hello one' },
      { app: 'web', host: 'web1', message: 'public hello two' },
      { app: 'billing', host: 'web1', message: 'invoice 2 sent to customer 14' },
      { app: 'billing', host: 'web1', message: 'invoice 3 sent to customer 21' },
      { app: 'billing', host: 'zqvaulthost', message: 'invoice 4 sent to customer 28' },
      { app: 'billing', host: 'zqvaulthost', message: 'invoice 5 sent to customer 35' },
      ...[1, 2, 3].map((i) => ({
        app: 'zqvaultapp',
        host: 'zqvaulthost',
        tier: 'restricted',
        message: `zqvault launch code ${i}`,
        vault_key: 'zqvault-value',
      })),
    ]);
    for (const e of await adminSearch('host:zqvaulthost')) secretIds.push(e.ev_id);
    expect(secretIds).toHaveLength(5);
    publicId = ((await adminSearch('app:web'))[0] as Row).ev_id;
    secretPattern = ((await adminSearch('app:zqvaultapp'))[0] as Row).pattern_id;
    sharedPattern = ((await adminSearch('app:billing'))[0] as Row).pattern_id;
    adminQuery = (await query(t.adminToken, 'Search', { page_size: 100 })).json().query_id;

    // The control fired (triggers ran over these events), every holder's trigger sent its
    // public matches, and the admin's trigger opened a task of restricted events.
    await eventually('the admin’s trigger notified', () => ctl.got.some((r) => r.body.includes(MARK)));
    await eventually('every holder’s trigger notified', () =>
      HOLDERS.every((h) =>
        ['', ' threshold', ' new_pattern'].every((kind) =>
          leak.got.some((r) => r.body.includes(`"holder ${h}${kind}"`)),
        ),
      ),
    );
    adminTask = await eventually('the admin’s task opened', async () => {
      const tasks = (await call(t.adminToken, 'GET', '/api/tasks?page_size=100')).json().results as Array<{
        id: number;
        ev_ids: string[];
      }>;
      return tasks.find((x) => x.ev_ids.some((id) => secretIds.includes(id)))?.id;
    });
    await new Promise((r) => setTimeout(r, 500));
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    wsUrl = `${address.replace('http', 'ws')}/ws/live-updates`;
  });
  afterAll(async () => {
    await ctl?.close();
    await leak?.close();
    await t?.close();
  });

  describe.each(HOLDERS)('a holder of %s', (h) => {
    it('queries of every type show no restricted event, value or count', async () => {
      const { token } = holder(h);
      for (const [type, params] of [
        ['Search', { page_size: 100 }],
        ['Search', { query: 'launch code' }],
        ['TopN', { field: 'app', n: 50 }],
        ['TopN', { field: 'vault_key', n: 50 }],
        ['LastN', { field: 'host', n: 50 }],
        ['Summary', { group_by: ['app', 'host'], metrics: [{ op: 'count' }] }],
        ['Timeline', { interval: '1m', split_by: 'app' }],
        ['Patterns', { n: 1000 }],
        ['Table', { query: '* | stats count() by app, host' }],
        ['Table', { query: '* | patterns' }],
      ] as const) {
        const res = await query(token, type, params);
        expect(res.statusCode, `${type} ${res.body}`).toBe(200);
        clean(`${type} ${JSON.stringify(params)}`, res.body);
      }
      const readable = (
        await query(t.adminToken, 'Search', { query: 'NOT tier:restricted AND NOT host:zqvaulthost' })
      ).json().results.total;
      expect((await query(token, 'Search', { page_size: 100 })).json().results.total).toBe(readable);
    });

    it('its own held query: read, recalculated, exported, subscribed', async () => {
      const { token } = holder(h);
      const qid = (await query(token, 'Search', { page_size: 100 })).json().query_id as string;
      for (const path of [
        `/api/query/${qid}`,
        `/api/query/${qid}/recalculate`,
        `/api/query/${qid}/export?ftype=csv`,
        `/api/query/${qid}/export?ftype=json`,
      ]) {
        const res = await call(token, 'GET', path);
        expect(res.statusCode, path).toBeLessThan(300);
        clean(path, res.body);
      }
      clean('subscribe query_id', JSON.stringify(await subscribe(token, { query_id: qid })));
    });

    it('an admin’s held query: read, recalculated, exported, subscribed', async () => {
      const { token } = holder(h);
      for (const path of [
        `/api/query/${adminQuery}`,
        `/api/query/${adminQuery}/recalculate`,
        `/api/query/${adminQuery}/export?ftype=csv`,
        `/api/query/${adminQuery}/export?ftype=json`,
      ]) {
        const res = await call(token, 'GET', path);
        clean(`${path} (${res.statusCode})`, res.body);
      }
      clean('subscribe admin query_id', JSON.stringify(await subscribe(token, { query_id: adminQuery })));
    });

    it('dashboards and widgets, the admin’s included: listed, read and subscribed', async () => {
      const { token } = holder(h);
      for (const path of [
        '/api/dashboards?show_all=true',
        `/api/dashboards/${adminDashboard}`,
        '/api/widgets?show_all=true',
        `/api/widgets/${adminWidget}`,
      ]) {
        const res = await call(token, 'GET', path);
        clean(`${path} (${res.statusCode})`, res.body);
      }
      const viewed = await subscribe(token, { widget_id: adminWidget });
      clean('subscribe widget', JSON.stringify(viewed));
      // The widget's query, as its viewer got it: read again by id.
      for (const m of viewed.filter((x) => x[0] === 'widget-update')) {
        const qid = (m[1].data as { query_id?: string }).query_id;
        for (const path of [`/api/query/${qid}`, `/api/query/${qid}/export?ftype=json`]) {
          const res = await call(token, 'GET', path);
          clean(`${path} (${res.statusCode})`, res.body);
        }
      }
      clean('subscribe dashboard', JSON.stringify(await subscribe(token, { dashboard_id: adminDashboard })));
      // Its own widget over everything: computed for it.
      const own = await call(token, 'POST', '/api/dashboards', {
        title: `mine ${h}`,
        widgets: [{ title: 'All', query: { type: 'Search', params: { time_range: LAST_HOUR } } }],
      });
      if (own.statusCode === 201)
        clean(
          'subscribe own widget',
          JSON.stringify(await subscribe(token, { widget_id: own.json().widgets[0].id })),
        );
    });

    it('triggers: its own triggers’ notifications (match, threshold, new pattern) carry only what it may read', async () => {
      for (const kind of ['', ' threshold', ' new_pattern']) {
        const mine = leak.got.filter((r) => r.body.includes(`"holder ${h}${kind}"`));
        expect(mine.length, kind).toBeGreaterThan(0);
        for (const r of mine) clean(`notification${kind}`, r.body);
      }
      clean('triggers list', (await call(holder(h).token, 'GET', '/api/triggers?show_all=true')).body);
      clean('event triggers', (await call(holder(h).token, 'GET', `/api/events/${publicId}/triggers`)).body);
    });

    it.runIf(h === 'manage_triggers')(
      'triggers: another user’s trigger or channel it changed does not send it what that user reads',
      async () => {
        for (const r of leak.got.filter((x) => x.body.includes('"victim')))
          clean('victim notification', r.body);
      },
    );

    it('deliveries: no payload of a restricted event', async () => {
      const res = await call(holder(h).token, 'GET', '/api/deliveries?page_size=100');
      expect(res.statusCode, res.body).toBe(200);
      clean('deliveries', res.body);
    });

    it('tasks: no restricted event id, in the list or in a task opened by the admin’s trigger', async () => {
      const { token } = holder(h);
      clean('tasks', (await call(token, 'GET', '/api/tasks?page_size=100')).body);
      const task = await call(token, 'GET', `/api/tasks/${adminTask}`);
      clean(`task ${adminTask} (${task.statusCode})`, task.body);
    });

    it('patterns: a restricted pattern is 404; a shared one counts only readable events', async () => {
      const { token } = holder(h);
      const hidden = await call(token, 'GET', `/api/patterns/${secretPattern}`);
      expect(hidden.statusCode).toBe(404);
      const shared = await call(token, 'GET', `/api/patterns/${sharedPattern}`);
      expect(shared.statusCode, shared.body).toBe(200);
      expect(shared.json().count).toBe(2);
      clean('shared pattern', shared.body);
      const listed = (await query(token, 'Patterns', { n: 1000 })).json().results;
      const row = listed.patterns.find((p: { pattern_id: string }) => p.pattern_id === sharedPattern);
      expect(row?.count).toBe(2);
      expect(listed.patterns.map((p: { pattern_id: string }) => p.pattern_id)).not.toContain(secretPattern);
    });

    it('fields: no restricted field name or value', async () => {
      const res = await call(holder(h).token, 'GET', '/api/fields?preset=last_hour');
      expect(res.statusCode, res.body).toBe(200);
      clean('fields', res.body);
      expect(res.body).not.toContain('vault_key');
    });

    it('events by id, timestamps, triggers and context: 404 for a restricted event; context skips them', async () => {
      const { token } = holder(h);
      for (const id of secretIds)
        for (const suffix of ['', '/timestamps', '/triggers', '/context']) {
          const res = await call(token, 'GET', `/api/events/${id}${suffix}`);
          expect(res.statusCode, `${suffix} ${res.body}`).toBe(404);
        }
      const around = await call(token, 'GET', `/api/events/${publicId}/context?by=&before=100&after=100`);
      expect(around.statusCode, around.body).toBe(200);
      clean('context', around.body);
    });

    it('reports: of a query and of the admin’s dashboard, only what it may read', async () => {
      const { token } = holder(h);
      for (const source of [
        { kind: 'query', query: { type: 'Search', params: { time_range: LAST_HOUR } } },
        { kind: 'dashboard', dashboard_id: adminDashboard },
      ]) {
        const made = await call(token, 'POST', '/api/reports', { ftype: 'csv', source });
        if (made.statusCode !== 202) {
          clean(`report refused (${made.statusCode})`, made.body);
          continue;
        }
        const id = made.json().id;
        await eventually('the report done', async () => {
          const r = (await call(token, 'GET', `/api/reports/${id}`)).json();
          return r.status === 'READY' || r.status === 'ERROR';
        });
        clean(`report of ${source.kind}`, (await call(token, 'GET', `/api/reports/${id}/file`)).body);
      }
    });

    it('audit: refused to a non-admin', async () => {
      const { token } = holder(h);
      expect((await call(token, 'GET', '/api/audit')).statusCode).toBe(403);
      expect((await call(token, 'GET', '/api/audit/export?ftype=ndjson')).statusCode).toBe(403);
    });

    it('saved searches: another’s private one is not listed or read', async () => {
      const { token } = holder(h);
      clean('saved searches', (await call(token, 'GET', '/api/saved-searches?page_size=100')).body);
      expect((await call(token, 'GET', `/api/saved-searches/${privateSearch}`)).statusCode).toBe(404);
    });

    it('streams: the restricted stream’s events are not counted for it', async () => {
      const res = await call(holder(h).token, 'GET', '/api/streams?counts=true');
      expect(res.statusCode, res.body).toBe(200);
      const streams = res.json().results as Array<{ id: number; rule: string | null; event_count?: number }>;
      const v = streams.find((s) => s.id === vault);
      if (v) expect(v).not.toHaveProperty('event_count');
      // A manager sees the rules (what they manage); no event content.
      clean('streams', JSON.stringify(streams.map(({ rule: _rule, ...s }) => s)));
    });

    it('pipelines: listed and simulated without any stored event', async () => {
      const { token } = holder(h);
      clean('pipelines', (await call(token, 'GET', '/api/pipelines')).body);
      const sim = await call(token, 'POST', '/api/pipelines/simulate', {
        pipeline_id: builtinPipeline,
        events: [{ app: 'sshd', message: 'Accepted password for x from 10.0.0.1 port 22 ssh2' }],
      });
      clean(`simulate (${sim.statusCode})`, sim.body);
    });

    it('tokens, channels and users: nothing of an event', async () => {
      const { token } = holder(h);
      for (const path of ['/api/authtokens?show_all=true', '/api/channels?show_all=true', '/api/users/me'])
        clean(path, (await call(token, 'GET', path)).body);
    });

    it('the live tail sends only new events it may read', async () => {
      const { token } = holder(h);
      const q = (
        await query(token, 'Search', { time_range: { preset: 'last_15_minutes' }, query: `tail${h}` })
      ).json();
      const c = await Client.open(`${wsUrl}?token=${token}`);
      try {
        c.send(['subscribe', { query_id: q.query_id }]);
        await c.next((m) => m[0] === 'widget-update');
        await ingest([
          { app: 'zqvaultapp', host: 'zqvaulthost', tier: 'restricted', message: `zqvault tail${h}` },
          { app: 'web', host: 'web1', message: `public tail${h}` },
        ]);
        const total = (m: Msg) => (m[1].data as { results?: { total?: number } }).results?.total ?? 0;
        await c.next((m) => m[0] === 'widget-update' && total(m) >= 1, 5000);
        await new Promise((r) => setTimeout(r, 300));
        clean('live tail', JSON.stringify(c.messages));
      } finally {
        c.ws.close();
      }
      for (const e of await adminSearch(`"zqvault tail${h}"`)) secretIds.push(e.ev_id);
    });
  });

  // What the admin-level permissions can do (docs/access.md): change what they read. The
  // others cannot make these changes.
  describe('admin-level permissions', () => {
    it('manage_streams: its holder can name themselves a reader (admin-level); no one else can', async () => {
      for (const h of HOLDERS) {
        const who = holder(h);
        const res = await call(who.token, 'PATCH', `/api/streams/${vault}`, {
          readers: { teams: [vaultTeam], users: [who.id] },
        });
        expect(res.statusCode, `${h} ${res.body}`).toBe(h === 'manage_streams' ? 200 : 403);
        if (h !== 'manage_streams') continue;
        const found = await query(who.token, 'Search', { query: 'launch code' });
        expect(found.json().results.total).toBe(3);
        const back = await call(t.adminToken, 'PATCH', `/api/streams/${vault}`, {
          readers: { teams: [vaultTeam], users: [] },
        });
        expect(back.statusCode).toBe(200);
        expect((await query(who.token, 'Search', { query: 'launch code' })).json().results.total).toBe(0);
      }
    });

    it('manage_pipelines: its holder can move new events out of the stream (admin-level); no one else can', async () => {
      for (const h of HOLDERS) {
        const who = holder(h);
        const res = await call(who.token, 'POST', '/api/pipelines', {
          name: `unveil ${h}`,
          when: 'host:zqvaulthost',
          steps: [{ set: { field: 'host', value: 'web9' } }, { set: { field: 'tier', value: 'public' } }],
        });
        expect(res.statusCode, `${h} ${res.body}`).toBe(h === 'manage_pipelines' ? 201 : 403);
        if (h !== 'manage_pipelines') continue;
        await ingest([
          { app: 'billing', host: 'zqvaulthost', tier: 'restricted', message: 'moved by a pipeline' },
        ]);
        const found = await query(who.token, 'Search', { query: '"moved by a pipeline"' });
        expect(found.json().results.total).toBe(1);
        expect((await call(t.adminToken, 'DELETE', `/api/pipelines/${res.json().id}`)).statusCode).toBe(204);
      }
    });
  });
});
