/**
 * Built-in pipelines at intake, seen from outside: real OpenSSH lines sent as a file
 * shipper sends them (`{"message": <line>}` over /api/ingest) are searchable by the
 * fields the pipelines pull out, and the Security dashboard's question, "top source IPs
 * of failed logins", gets grep's answer.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { storedEvents } from '../../helpers/events.js';

const LINES = readFileSync(new URL('../../fixtures/loghub/OpenSSH_2k.log.txt', import.meta.url), 'utf8')
  .replace(/\r/g, '')
  .replace(/\n$/, '')
  .split('\n');

describe('built-in pipelines at intake', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: LINES.map((message) => JSON.stringify({ message })).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: 2000, rejected: 0 });
  });
  afterAll(() => t?.close());

  // The sample's Dec 10 lines land in the last December before now.
  const RANGE = { ts_from: 0, ts_to: Math.floor(Date.now() / 1000) + 86_400 };
  const post = (payload: object) => t.as(t.adminToken, { method: 'POST', url: '/api/query', payload });

  it('answers "top source IPs of failed logins" as grep does', async () => {
    const grep = new Map<string, number>();
    for (const line of LINES) {
      const ip = / Failed password .* from (\d+\.\d+\.\d+\.\d+) /.exec(line)?.[1];
      if (ip) grep.set(ip, (grep.get(ip) ?? 0) + 1);
    }
    const q = (
      await post({
        type: 'TopN',
        params: { time_range: RANGE, query: '"Failed password"', field: 'src_ip', n: 1000 },
      })
    ).json();
    expect(q.status).toBe('SUCCESS');
    const topn = new Map<string, number>(
      q.results.items.map((i: { value: string; count: number }) => [i.value, i.count]),
    );
    expect(topn.get('183.62.140.253')).toBe(286);
    expect(topn).toEqual(grep);
  });

  it('fills the Security dashboard query: failed logins by user', async () => {
    const q = (
      await post({
        type: 'TopN',
        params: { time_range: RANGE, query: 'action:login_failure', field: 'user', n: 3 },
      })
    ).json();
    expect(q.results.items[0]).toMatchObject({ value: 'root' });
    expect(q.results.total).toBe(
      LINES.filter((l) => /: (?:message repeated \d+ times: \[ )?Failed \w+ for/.test(l)).length,
    );
  });

  it('keeps the line as received in raw, and counts the work in /metrics', async () => {
    const search = (
      await post({
        type: 'Search',
        params: { time_range: RANGE, query: 'action:break_in_attempt', page_size: 1 },
      })
    ).json();
    const ev = search.results.events[0];
    expect(ev).toMatchObject({ app: 'sshd', host: 'LabSZ', proc_id: expect.any(String) });
    const full = (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${ev.ev_id}` })).json();
    expect(LINES).toContain(full.raw.message);
    expect(Object.keys(full.raw)).toEqual(['message']);
    const metrics = (await t.as(null, { method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/logscope_pipeline_matched_events_total\{pipeline="OpenSSH server"\} 2000/);
    expect(metrics).not.toMatch(/logscope_pipeline_failed_events_total\{pipeline="OpenSSH server"\} [1-9]/);
  });
});

describe('POST /api/pipelines/simulate', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());
  const simulate = (payload: object, token = t.adminToken) =>
    t.as(token, { method: 'POST', url: '/api/pipelines/simulate', payload });

  it('shows events as a given pipeline would store them, storing nothing', async () => {
    const res = await simulate({
      pipeline: {
        name: 'orders',
        when: 'app:shop',
        steps: [
          { grok: { patterns: ['^order %{INT:order.id} paid %{NUMBER:order.amount} by %{USERNAME:user}'] } },
          { drop: {}, if: 'user:bot' },
        ],
      },
      events: [
        { app: 'shop', message: 'order 42 paid 9.90 by ann' },
        { app: 'shop', message: 'order 43 paid 1.00 by bot' },
        { app: 'other', message: 'order 44 paid 1.00 by bob' },
        'not an object',
      ],
    });
    expect(res.statusCode).toBe(200);
    const [paid, bot, other, bad] = res.json().events;
    expect(paid).toMatchObject({
      dropped: false,
      applied: ['orders'],
      event: { user: 'ann', 'order.id': '42' },
    });
    expect(bot).toMatchObject({ dropped: true, event: null });
    expect(other).toMatchObject({ applied: [], event: { user: null } });
    expect(bad).toMatchObject({ event: null, error: expect.stringContaining('JSON object') });
    expect(t.rt.platform.batcher.stats().committedEvents).toBe(0);
  });

  it('runs the built-ins when no pipeline is given', async () => {
    const res = await simulate({
      events: [{ app: 'sshd', message: 'Failed password for root from 1.2.3.4 port 22 ssh2' }],
    });
    expect(res.json().events[0]).toMatchObject({
      applied: expect.arrayContaining(['OpenSSH server']),
      event: { action: 'login_failure', src_ip: '1.2.3.4', user: 'root' },
    });
  });

  it('refuses an invalid pattern with where it is', async () => {
    const res = await simulate({
      pipeline: {
        steps: [{ grok: { patterns: ['%{WORD:a} %{NOPE:b}'] } }, { regex: { pattern: '(?P<x>a' } }],
      },
      events: [{ message: 'x' }],
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.errors['pipeline.steps[0].grok.patterns[0]'][0]).toMatch(/%\{NOPE\}.*position 10/);
    expect(Object.keys(body.errors)).toContain('pipeline.steps[1].regex.pattern');
  });

  it('is for admins and manage_pipelines holders', async () => {
    const plain = await t.user('plain');
    const keeper = await t.user('keeper', { permissions: ['manage_pipelines'] });
    expect((await simulate({ events: [{ message: 'x' }] }, plain.token)).statusCode).toBe(403);
    expect((await simulate({ events: [{ message: 'x' }] }, keeper.token)).statusCode).toBe(200);
  });
});

describe('a json step keeps JSON types (docs/intake/http.md)', () => {
  it('stores 7 as the number 7, true as true, a list as a list; raw stays the line as sent', async () => {
    const t = await createTestApp({ LOGSCOPE_INGEST_BATCH_MS: '5' });
    try {
      const made = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/pipelines',
        payload: {
          name: 'app json',
          when: 'app:jsonapp',
          steps: [{ json: { field: 'message', target: 'j' } }],
        },
      });
      expect(made.statusCode, made.body).toBe(201);
      const line = '{"attempts": 7, "ratio": 0.5, "ok": true, "tags": ["a", "b"], "who": "ann"}';
      const ingest = await t.as(t.adminToken, {
        method: 'POST',
        url: '/api/ingest',
        payload: { app: 'jsonapp', message: line },
      });
      expect(ingest.json()).toMatchObject({ accepted: 1 });
      const [stored] = await storedEvents(t, (e) => e.app === 'jsonapp');
      const full = (await t.as(t.adminToken, { method: 'GET', url: `/api/events/${stored!.ev_id}` })).json();
      expect(full).toMatchObject({
        'j.attempts': 7,
        'j.ratio': 0.5,
        'j.ok': true,
        'j.tags': ['a', 'b'],
        'j.who': 'ann',
      });
      expect(full.raw).toEqual({ app: 'jsonapp', message: line });
    } finally {
      await t.close();
    }
  });
});
