/**
 * A login flood from many addresses and names (issue 73: /api/health's p99 reached 271 ms on
 * a machine at half speed): password work is bounded so the event loop keeps a core, and
 * health answers within the ingest bounds (250 ms) while it lasts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, type TestApp } from '../../helpers/app.js';

describe(`a login flood on ${BACKEND}`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('keeps /api/health under 250 ms at p99 while 32 clients try passwords for 4 s', async () => {
    await t.user('victim');
    const until = performance.now() + 4000;
    let attempts = 0;
    const codes = new Map<number, number>();
    const client = async (c: number) => {
      for (let i = 0; performance.now() < until; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          // Every attempt from its own address and name: no throttle refuses it before the hash.
          remoteAddress: `10.${c}.${(i >> 8) & 255}.${i & 255}`,
          payload: { username: i % 2 ? 'victim' : `nobody${c}-${i}`, password: 'wrong' },
        });
        attempts++;
        codes.set(res.statusCode, (codes.get(res.statusCode) ?? 0) + 1);
      }
    };
    const health: number[] = [];
    const sampler = (async () => {
      while (performance.now() < until) {
        const started = performance.now();
        const res = await t.app.inject({ method: 'GET', url: '/api/health' });
        health.push(performance.now() - started);
        expect(res.statusCode).toBe(200);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    await Promise.all([sampler, ...Array.from({ length: 32 }, (_, c) => client(c))]);
    health.sort((a, b) => a - b);
    const p99 = health[Math.min(health.length - 1, Math.floor(health.length * 0.99))] as number;
    console.log(
      `login flood: ${attempts} attempts (${JSON.stringify(Object.fromEntries(codes))}), health p99 ${p99.toFixed(0)} ms of ${health.length}`,
    );
    // Refused attempts are wrong passwords (401) or the bounded queue's 429, nothing else.
    expect([...codes.keys()].every((c) => c === 401 || c === 429)).toBe(true);
    expect(codes.get(401)).toBeGreaterThan(0);
    expect(health.length).toBeGreaterThan(50);
    expect(p99).toBeLessThan(250);
  }, 30_000);
});
