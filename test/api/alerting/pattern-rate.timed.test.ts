/**
 * The pattern_rate condition (docs/api/alerting.md) through HTTP, with 10-second windows
 * and a settle time of 1 s: one timeline of two judged windows (k0, during which the
 * triggers are made, and k1), history ingested with past `ts` as baselines, every
 * notification caught by real webhook receivers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, TEST_BUS_URL, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';
import { receiver } from '../../helpers/webhook-receiver.js';

const W = 10_000;
const WEEK = 604_800_000;

interface Note {
  kind: 'fire' | 'recover';
  trigger: { name: string };
  change: string;
  count: number;
  baseline_count: number;
  ratio: number | null;
  window: { ts_from: number; ts_to: number };
  baseline_window: { ts_from: number; ts_to: number };
  pattern: { pattern_id: string; template: string };
  group: { pattern_id: string };
  samples: Array<{ ev_id: string; ts: number; message: string }>;
  search_url: string;
  window_seconds: number;
}

/** A seeded generator (mulberry32), so the noise is the same on every run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Poisson count of mean `mean` (Knuth). */
function poisson(mean: number, next: () => number): number {
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = next(); p > limit; p *= next()) k++;
  return k;
}

// The judge is the notifier node; this timeline runs on one process.
describe.skipIf(Boolean(TEST_BUS_URL))('pattern_rate triggers', () => {
  let t: TestApp;
  const hooks: Array<Awaited<ReturnType<typeof receiver>>> = [];
  /** The start of window k0 (ms). */
  let start = 0;
  let notes: Note[] = [];
  let bob: { id: number; token: string };
  let carol: { id: number; token: string };
  let bobsTrigger = 0;
  const of = (trigger: string) => notes.filter((n) => n.trigger.name === trigger);

  const ok = async (token: string, url: string, payload: object) => {
    const res = await t.as(token, { method: 'POST', url, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const hook = async (token: string) => {
    const r = await receiver();
    hooks.push(r);
    return (await ok(token, '/api/channels', { name: 'hook', type: 'webhook', config: { url: r.url } }))
      .id as number;
  };
  const trigger = (token: string, channel: number, name: string, query: string, condition: object = {}) =>
    ok(token, '/api/triggers', {
      name,
      query,
      notify: [channel],
      condition: { type: 'pattern_rate', window_seconds: 10, ...condition },
    });
  /** `n` events of `app` with messages made by `message`, spread over the window starting at `fromMs`. */
  const records = (app: string, n: number, fromMs: number, message: (i: number) => string) =>
    Array.from({ length: n }, (_, i) => ({
      app,
      message: message(i),
      timestamp: new Date(fromMs + Math.floor(((i + 0.5) * (W - 100)) / n)).toISOString(),
    }));
  const ingest = async (batch: object[]) => {
    const res = await t.as(t.adminToken, {
      method: 'POST',
      url: '/api/ingest',
      headers: { 'content-type': 'application/x-ndjson' },
      payload: batch.map((r) => JSON.stringify(r)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: batch.length });
  };
  const until = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms - Date.now())));

  const surge = (i: number) => `Connection closed by 10.0.${i % 250}.${(i * 7) % 250} port ${40000 + i}`;
  const fresh = (i: number) => `Disk quota exceeded on volume ${i}`;
  const steady = (i: number) => `Heartbeat ok seq ${i}`;
  const gone = (i: number) => `Backup chunk ${i} uploaded in ${i * 3} ms`;
  const dropped = (i: number) => `Replica lag ${i} ms on shard ${i % 7}`;
  const weekly = (i: number) => `Nightly batch item ${i} processed`;
  const vault = (i: number) => `Vault unseal share ${i} accepted`;
  const noise = [(i: number) => `Cache miss for key ${i}`, (i: number) => `Request served in ${i} ms`];

  beforeAll(async () => {
    t = await createTestApp({ LOGSCOPE_PATTERN_RATE_SETTLE_SECONDS: '1' });
    const alice = await t.user('alice');
    bob = await t.user('bob');
    carol = await t.user('carol', { permissions: ['manage_triggers'] });
    await ok(t.adminToken, '/api/streams', {
      title: 'Vault',
      rule: 'app:vault',
      readers: { users: [alice.id] },
    });
    const admin = await hook(t.adminToken);
    const alices = await hook(alice.token);
    const bobs = await hook(bob.token);
    // Window k0 starts now or at the next boundary, leaving time to make triggers and ingest in it.
    const now = Date.now();
    start = Math.floor(now / W) * W;
    if (now - start > 4000) {
      start += W;
      await until(start + 50);
    }
    const k = (j: number) => start + j * W;
    await trigger(t.adminToken, admin, 'surge', 'app:surge');
    await trigger(t.adminToken, admin, 'gone', 'app:gone');
    await trigger(t.adminToken, admin, 'noise', 'app:noise');
    await trigger(t.adminToken, admin, 'weekly', 'app:weekly', { baseline: 'same_time_last_week' });
    await trigger(t.adminToken, admin, 'weekly as previous', 'app:weekly');
    // Every event its owner may read: alice reads Vault and Default, bob Default only.
    await trigger(alice.token, alices, 'alice reads all', '');
    bobsTrigger = (await trigger(bob.token, bobs, 'bob reads all', '')).id;
    const next = random(7);
    const noisy = (j: number) =>
      noise.flatMap((m, p) => records('noise', poisson(60, next), k(j), (i) => m(i + 1000 * p + 10_000 * j)));
    // History (before k0) and k0 itself.
    await ingest([
      ...records('surge', 10, k(-1), surge),
      ...records('surge', 10, k(-1), steady),
      ...records('surge', 100, k(0), surge),
      ...records('surge', 30, k(0), fresh),
      ...records('surge', 10, k(0), steady),
      ...[-3, -2, -1].flatMap((j) => records('gone', 25, k(j), (i) => gone(i + 100 * j))),
      ...[-2, -1].flatMap((j) => records('gone', 25, k(j), (i) => dropped(i + 100 * j))),
      ...[-3, -2, -1, 0].flatMap(noisy),
      ...records('weekly', 10, k(0) - WEEK, weekly),
      ...records('weekly', 60, k(-1), weekly),
      ...records('weekly', 60, k(0), weekly),
      ...records('vault', 10, k(-1), vault),
      ...records('vault', 100, k(0), (i) => vault(i + 500)),
    ]);
    // k1, once it has begun: the surge is over, the new kind stopped, the weekly surge goes on.
    await until(k(1) + 50);
    await ingest([
      ...records('surge', 10, k(1), (i) => surge(i + 5000)),
      ...records('surge', 10, k(1), steady),
      ...noisy(1),
      ...records('weekly', 60, k(1), weekly),
      ...records('vault', 10, k(1), vault),
    ]);
    // k1 is judged a second after it ends (on the next tick); its notifications, and any stray one, arrive.
    await until(k(2) + 2500);
    await eventually('the k1 recoveries', () => {
      notes = hooks.flatMap((h) => h.got.map((g) => JSON.parse(g.body) as Note));
      return of('surge').filter((n) => n.kind === 'recover').length >= 2;
    });
    await new Promise((r) => setTimeout(r, 500));
    notes = hooks.flatMap((h) => h.got.map((g) => JSON.parse(g.body) as Note));
  }, 55_000);
  afterAll(async () => {
    await t?.close();
    for (const h of hooks) await h.close();
  });

  it('a surge fires once (up, and new for a kind never seen) and recovers once', () => {
    const told = of('surge').map((n) => [n.kind, n.change, n.pattern.template.split(' ')[0]]);
    expect(told.sort()).toEqual([
      ['fire', 'new', 'Disk'],
      ['fire', 'up', 'Connection'],
      ['recover', 'new', 'Disk'],
      ['recover', 'up', 'Connection'],
    ]);
    const up = of('surge').find((n) => n.kind === 'fire' && n.change === 'up') as Note;
    expect(up).toMatchObject({
      count: 100,
      baseline_count: 10,
      ratio: 10,
      window_seconds: 10,
      window: { ts_from: start / 1000, ts_to: start / 1000 + 10 },
      baseline_window: { ts_from: start / 1000 - 10, ts_to: start / 1000 },
      group: { pattern_id: up.pattern.pattern_id },
      condition: { type: 'pattern_rate', baseline: 'previous', min_ratio: 3, min_count: 20 },
    });
    expect(up.pattern.template).toMatch(/^Connection closed by .* port /);
    expect(up.samples).toHaveLength(10);
    for (const s of up.samples) {
      expect(s.message).toMatch(/^Connection closed by/);
      expect(s.ts).toBeGreaterThanOrEqual(start / 1000);
      expect(s.ts).toBeLessThan(start / 1000 + 10);
    }
    const link = new URL(up.search_url);
    expect(link.searchParams.get('q')).toBe(`(app:surge) AND pattern_id:${up.pattern.pattern_id}`);
    expect([link.searchParams.get('from'), link.searchParams.get('to')]).toEqual([
      String(start / 1000),
      String(start / 1000 + 10),
    ]);
    const fresh = of('surge').find((n) => n.change === 'new' && n.kind === 'fire');
    expect(fresh).toMatchObject({ count: 30, baseline_count: 0, ratio: null });
    const recovered = of('surge').find((n) => n.change === 'up' && n.kind === 'recover');
    expect(recovered).toMatchObject({
      count: 10,
      baseline_count: 10,
      window: { ts_from: start / 1000 + 10 },
    });
  });

  it('a pattern steady for steady_windows windows that stops is gone (once); one steady for fewer is down', () => {
    const told = of('gone');
    expect(told.map((n) => [n.kind, n.change, n.pattern.template.split(' ')[0]]).sort()).toEqual([
      ['fire', 'down', 'Replica'],
      ['fire', 'gone', 'Backup'],
    ]);
    const g = told.find((n) => n.change === 'gone') as Note;
    expect(g).toMatchObject({
      count: 0,
      baseline_count: 25,
      baseline_window: { ts_from: start / 1000 - 10, ts_to: start / 1000 },
    });
    // Its samples and link are the baseline's: the window has none.
    expect(g.samples).toHaveLength(10);
    for (const s of g.samples) expect(s.ts).toBeLessThan(start / 1000);
    expect(new URL(g.search_url).searchParams.get('from')).toBe(String(start / 1000 - 10));
  });

  it('Poisson noise fires nothing', () => {
    expect(of('noise')).toEqual([]);
  });

  it('counts the windows judged, and no firing held back', async () => {
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    // Seven triggers, k0 and k1 each (k2 is not due yet).
    expect(metrics).toMatch(/^logscope_pattern_rate_windows_judged_total 14$/m);
    expect(metrics).toMatch(/^logscope_pattern_rate_suppressed_total 0$/m);
  });

  it('same_time_last_week compares with the week before; previous, on the same events, sees no change', () => {
    const told = of('weekly');
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({
      kind: 'fire',
      change: 'up',
      count: 60,
      baseline_count: 10,
      ratio: 6,
      baseline_window: { ts_from: (start - WEEK) / 1000, ts_to: (start - WEEK) / 1000 + 10 },
    });
    expect(of('weekly as previous')).toEqual([]);
  });

  it('a trigger counts only what its owner may read', () => {
    const templates = (name: string) => of(name).map((n) => n.pattern.template);
    expect(templates('alice reads all').some((x) => x.startsWith('Vault unseal'))).toBe(true);
    const bobs = of('bob reads all');
    expect(bobs.some((n) => n.pattern.template.startsWith('Connection closed'))).toBe(true);
    expect(JSON.stringify(bobs)).not.toContain('Vault');
  });

  it('a delivery shown to someone else withholds what the pattern did', async () => {
    const list = async (token: string) =>
      (await t.as(token, { method: 'GET', url: `/api/deliveries?trigger_id=${bobsTrigger}` })).json()
        .results as Array<{ payload: Record<string, unknown> }>;
    const whole = await list(bob.token);
    expect(whole.length).toBeGreaterThan(0);
    expect(whole[0]?.payload).toMatchObject({
      change: expect.any(String),
      baseline_count: expect.any(Number),
    });
    const held = await list(carol.token);
    expect(held.length).toBe(whole.length);
    for (const d of held)
      expect(d.payload).toMatchObject({
        withheld: true,
        change: null,
        baseline_count: null,
        ratio: null,
        count: null,
      });
  });
});
