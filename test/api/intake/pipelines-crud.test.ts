/**
 * /api/pipelines from outside: the built-ins listed with the rows an admin may change,
 * pipelines created, changed, disabled and deleted, each change applied to what intake
 * stores from then on, and invalid definitions refused with where the problem is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';

const SSHD_FAILED = 'Failed password for root from 10.1.2.3 port 4242 ssh2';

describe('/api/pipelines', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
    token?: string,
  ) => t.as(token ?? t.adminToken, { method, url, ...(payload ? { payload } : {}) });

  let sent = 0;
  /** Ingests one record and returns it as stored (found by a marker field). */
  async function stored(record: Record<string, unknown>): Promise<Record<string, unknown>> {
    const marker = `m${++sent}`;
    const ack = await call('POST', '/api/ingest', { ...record, marker });
    expect(ack.json()).toMatchObject({ accepted: 1 });
    const q = await call('POST', '/api/query', {
      type: 'Search',
      params: {
        time_range: { ts_from: 0, ts_to: Math.floor(Date.now() / 1000) + 60 },
        query: `marker:${marker}`,
      },
    });
    const events = q.json().results.events as Array<Record<string, unknown>>;
    expect(events).toHaveLength(1);
    return events[0] as Record<string, unknown>;
  }

  const builtin = async (name: string) => {
    const list = (await call('GET', '/api/pipelines?builtin=true&page_size=100')).json();
    const p = list.results.find((r: { name: string }) => r.name === name);
    expect(p).toBeDefined();
    return p as { id: number; name: string; order: number; enabled: boolean; steps: unknown[]; when: string };
  };

  it('lists the built-ins, enabled, in the order intake runs them, with their steps', async () => {
    const res = await call('GET', '/api/pipelines?page_size=100');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.count).toBeGreaterThanOrEqual(8);
    const names = body.results.map((p: { name: string }) => p.name);
    expect(names[0]).toBe('Syslog lines');
    expect(names).toContain('OpenSSH server');
    for (const p of body.results) {
      expect(p).toMatchObject({ builtin: true, enabled: true, owner: null });
      expect(p.steps.length).toBeGreaterThan(0);
    }
    const orders = body.results.map((p: { order: number }) => p.order);
    expect(orders).toEqual([...orders].sort((a: number, b: number) => a - b));
    const one = await call('GET', `/api/pipelines/${body.results[1].id}`);
    expect(one.json()).toEqual(body.results[1]);
  });

  it('creates a pipeline that applies to what is ingested next, after the built-ins', async () => {
    const before = await stored({ app: 'sshd', message: SSHD_FAILED });
    expect(before).toMatchObject({ action: 'login_failure', src_ip: '10.1.2.3' });
    expect(before.alerting).toBeUndefined();

    const res = await call('POST', '/api/pipelines', {
      name: 'Page on failed root logins',
      // Sees what the sshd built-in extracted: it runs after the built-ins by default.
      when: 'action:login_failure AND user:root',
      steps: [{ set: { field: 'alerting', value: 'page {{src_ip}}' } }],
    });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      name: 'Page on failed root logins',
      description: '',
      enabled: true,
      order: 200,
      builtin: false,
      owner: expect.any(Number),
    });
    expect(await stored({ app: 'sshd', message: SSHD_FAILED })).toMatchObject({ alerting: 'page 10.1.2.3' });
    // A user other than root: the condition does not hold.
    const other = await stored({ app: 'sshd', message: SSHD_FAILED.replace('root', 'bob') });
    expect(other.alerting).toBeUndefined();

    // Disabled: nothing more; enabled again: back.
    const off = await call('PATCH', `/api/pipelines/${created.id}`, { enabled: false });
    expect(off.json()).toMatchObject({ enabled: false });
    expect((await stored({ app: 'sshd', message: SSHD_FAILED })).alerting).toBeUndefined();
    await call('PATCH', `/api/pipelines/${created.id}`, { enabled: true });
    expect((await stored({ app: 'sshd', message: SSHD_FAILED })).alerting).toBe('page 10.1.2.3');

    // Changed steps apply at once; the stored events keep what they had.
    const changed = await call('PATCH', `/api/pipelines/${created.id}`, {
      steps: [{ set: { field: 'alerting', value: 'mail' } }],
    });
    expect(changed.statusCode).toBe(200);
    expect((await stored({ app: 'sshd', message: SSHD_FAILED })).alerting).toBe('mail');
    expect(await stored({ app: 'sshd', message: SSHD_FAILED })).not.toHaveProperty(
      'alerting',
      'page 10.1.2.3',
    );

    // Deleted: gone, and intake no longer runs it.
    expect((await call('DELETE', `/api/pipelines/${created.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/api/pipelines/${created.id}`)).statusCode).toBe(404);
    expect((await stored({ app: 'sshd', message: SSHD_FAILED })).alerting).toBeUndefined();
  });

  it('runs pipelines by order: a low order runs before the built-ins', async () => {
    const early = (
      await call('POST', '/api/pipelines', {
        name: 'Name the app',
        order: 1,
        when: 'origin:ssh',
        steps: [{ set: { field: 'app', value: 'sshd' } }],
      })
    ).json();
    // The sshd built-in sees the app the early pipeline set.
    expect(await stored({ origin: 'ssh', message: SSHD_FAILED })).toMatchObject({
      app: 'sshd',
      action: 'login_failure',
    });
    await call('PATCH', `/api/pipelines/${early.id}`, { order: 500 });
    expect((await stored({ origin: 'ssh', message: SSHD_FAILED })).action).toBeNull();
    await call('DELETE', `/api/pipelines/${early.id}`);
  });

  it('refuses an invalid definition with where the problem is, and changes nothing', async () => {
    const count = (await call('GET', '/api/pipelines')).json().count;
    const res = await call('POST', '/api/pipelines', {
      name: 'broken',
      when: 'status:>',
      steps: [
        { grok: { field: 'message', patterns: ['%{WORD:a} %{NOPE:b}'] } },
        { regex: { field: 'message', pattern: '(?P<x>a' } },
        { teleport: {} },
      ],
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe('invalid');
    expect(body.errors['steps[0].grok.patterns[0]'][0]).toMatch(/%\{NOPE\}.*position 10/);
    expect(Object.keys(body.errors)).toEqual(
      expect.arrayContaining(['when', 'steps[1].regex.pattern', 'steps[2]']),
    );
    expect((await call('GET', '/api/pipelines')).json().count).toBe(count);

    const ok = (await call('POST', '/api/pipelines', { name: 'fine', steps: [] })).json();
    const bad = await call('PATCH', `/api/pipelines/${ok.id}`, { steps: [{ kv: { separator: '' } }] });
    expect(bad.statusCode).toBe(400);
    expect(Object.keys(bad.json().errors)[0]).toMatch(/^steps\[0\]\.kv/);
    expect((await call('GET', `/api/pipelines/${ok.id}`)).json().steps).toEqual([]);
    // Schema-level problems: a blank name, an unknown field.
    expect((await call('POST', '/api/pipelines', { name: '', steps: [] })).statusCode).toBe(400);
    expect((await call('POST', '/api/pipelines', { name: 'x', steps: [], owner: 3 })).statusCode).toBe(400);
    await call('DELETE', `/api/pipelines/${ok.id}`);
  });

  it('lets a built-in be disabled, reordered and saved back whole, never changed or deleted', async () => {
    const sshd = await builtin('OpenSSH server');
    const off = await call('PATCH', `/api/pipelines/${sshd.id}`, { enabled: false });
    expect(off.statusCode).toBe(200);
    const plain = await stored({ app: 'sshd', message: SSHD_FAILED });
    expect(plain.src_ip).toBeNull();
    expect(plain.action).toBeNull();

    // A client that saves the whole object back (PUT) with only enabled changed.
    const { id, name, when, steps } = sshd;
    const on = await call('PUT', `/api/pipelines/${id}`, {
      name,
      when,
      steps,
      enabled: true,
      order: sshd.order,
    });
    expect(on.statusCode).toBe(200);
    expect(await stored({ app: 'sshd', message: SSHD_FAILED })).toMatchObject({ src_ip: '10.1.2.3' });

    const changed = await call('PATCH', `/api/pipelines/${id}`, { steps: [{ drop: {} }] });
    expect(changed.statusCode).toBe(400);
    expect(changed.json().errors.steps[0]).toMatch(/built-in/);
    expect((await call('PATCH', `/api/pipelines/${id}`, { name: 'mine' })).statusCode).toBe(400);
    const del = await call('DELETE', `/api/pipelines/${id}`);
    expect(del.statusCode).toBe(409);
    expect(del.json().code).toBe('conflict');
    expect(await builtin('OpenSSH server')).toMatchObject({ enabled: true, steps });
  });

  it('simulates a stored pipeline by id, enabled or not', async () => {
    const p = (
      await call('POST', '/api/pipelines', {
        name: 'orders',
        enabled: false,
        steps: [{ grok: { patterns: ['^order %{INT:order.id}'] } }],
      })
    ).json();
    const res = await call('POST', '/api/pipelines/simulate', {
      pipeline_id: p.id,
      events: [{ message: 'order 42' }],
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().events[0]).toMatchObject({ applied: ['orders'], event: { 'order.id': '42' } });
    const sshd = await builtin('OpenSSH server');
    const bySshd = await call('POST', '/api/pipelines/simulate', {
      pipeline_id: sshd.id,
      events: [{ app: 'sshd', message: SSHD_FAILED }],
    });
    expect(bySshd.json().events[0].event).toMatchObject({ action: 'login_failure' });
    expect(
      (await call('POST', '/api/pipelines/simulate', { pipeline_id: 999_999, events: [{}] })).statusCode,
    ).toBe(404);
    const both = await call('POST', '/api/pipelines/simulate', {
      pipeline_id: p.id,
      pipeline: { steps: [] },
      events: [{}],
    });
    expect(both.statusCode).toBe(400);
    await call('DELETE', `/api/pipelines/${p.id}`);
  });

  it('keeps a pipeline’s counters across changes, its own and others’', async () => {
    await stored({ app: 'sshd', message: SSHD_FAILED });
    const count = () =>
      t.as(null, { method: 'GET', url: '/metrics' }).then((r) => {
        const m = /logscope_pipeline_matched_events_total\{pipeline="OpenSSH server"\} (\d+)/.exec(r.body);
        return Number(m?.[1] ?? 0);
      });
    const before = await count();
    expect(before).toBeGreaterThan(0);
    const p = (await call('POST', '/api/pipelines', { name: 'noop', steps: [] })).json();
    await call('DELETE', `/api/pipelines/${p.id}`);
    expect(await count()).toBe(before);
    const sshd = await builtin('OpenSSH server');
    await call('PATCH', `/api/pipelines/${sshd.id}`, { order: sshd.order + 1 });
    await stored({ app: 'sshd', message: SSHD_FAILED });
    expect(await count()).toBe(before + 1);
    await call('PATCH', `/api/pipelines/${sshd.id}`, { order: sshd.order });
  });

  it('is for admins and manage_pipelines holders', async () => {
    const plain = await t.user('plain');
    const keeper = await t.user('keeper', { permissions: ['manage_pipelines'] });
    expect((await call('GET', '/api/pipelines', undefined, plain.token)).statusCode).toBe(403);
    expect((await call('POST', '/api/pipelines', { name: 'x', steps: [] }, plain.token)).statusCode).toBe(
      403,
    );
    expect((await call('GET', '/api/pipelines', undefined, keeper.token)).statusCode).toBe(200);
    const mine = await call('POST', '/api/pipelines', { name: 'kept', steps: [] }, keeper.token);
    expect(mine.statusCode).toBe(201);
    expect(mine.json().owner).toBe(keeper.id);
    expect(
      (await call('DELETE', `/api/pipelines/${mine.json().id}`, undefined, plain.token)).statusCode,
    ).toBe(403);
    expect((await call('DELETE', `/api/pipelines/${mine.json().id}`)).statusCode).toBe(204);
  });
});
