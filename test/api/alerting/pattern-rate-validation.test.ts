/**
 * The pattern_rate condition's settings (docs/api/alerting.md): defaults filled in, each
 * bad setting a 400 keyed `condition.<name>`, and an empty query allowed for it alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';

describe('pattern_rate condition validation', () => {
  let t: TestApp;
  const create = (body: object) =>
    t.as(t.adminToken, { method: 'POST', url: '/api/triggers', payload: { name: 'rates', ...body } });

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('fills in the defaults, with or without a query', async () => {
    const bare = await create({ condition: { type: 'pattern_rate' } });
    expect(bare.statusCode, bare.body).toBe(201);
    expect(bare.json().condition).toEqual({
      type: 'pattern_rate',
      window_seconds: 300,
      baseline: 'previous',
      direction: 'both',
      min_ratio: 3,
      min_count: 20,
      steady_windows: 3,
    });
    const given = {
      type: 'pattern_rate',
      window_seconds: 10,
      baseline: 'rolling_24h',
      direction: 'down',
      min_ratio: 1.5,
      min_count: 1,
      steady_windows: 100,
    };
    const full = await create({ query: 'app:sshd', condition: given });
    expect(full.statusCode, full.body).toBe(201);
    expect(full.json().condition).toEqual(given);
    // Another condition still needs a query that selects something, on create and on change.
    const match = await create({ condition: { type: 'match' } });
    expect(match.statusCode).toBe(400);
    expect(Object.keys(match.json().errors)).toEqual(['query']);
    const changed = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/triggers/${bare.json().id}`,
      payload: { condition: { type: 'threshold', window_seconds: 60, op: 'gt', value: 1 } },
    });
    expect(changed.statusCode).toBe(400);
    expect(Object.keys(changed.json().errors)).toEqual(['query']);
  });

  it.each([
    ['window_seconds', 9],
    ['window_seconds', 86_401],
    ['window_seconds', 12.5],
    ['baseline', 'yesterday'],
    ['direction', 'sideways'],
    ['min_ratio', 1],
    ['min_ratio', 1000.5],
    ['min_ratio', 'three'],
    ['min_count', 0],
    ['min_count', 2.5],
    ['steady_windows', 1],
    ['steady_windows', 101],
  ])('refuses %s %j with a 400 keyed by its name', async (name, value) => {
    const res = await create({ condition: { type: 'pattern_rate', [name]: value } });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid' });
    expect(Object.keys(res.json().errors)).toEqual([`condition.${name}`]);
  });

  it('refuses an unknown setting by its name', async () => {
    const res = await create({ condition: { type: 'pattern_rate', group_by: ['host'] } });
    expect(res.statusCode).toBe(400);
    expect(Object.keys(res.json().errors)).toEqual(['condition.group_by']);
  });

  it("refuses, with a 409 naming the budget, what would take one user's reads past patternRateReadsPerHour", async () => {
    const bob = await t.user('bob');
    const as = (method: 'POST' | 'PATCH', url: string, payload: object) =>
      t.as(bob.token, { method, url, payload });
    const smallest = { type: 'pattern_rate', window_seconds: 10, baseline: 'rolling_24h' };
    // 100 at the smallest windows: each costs 720 reads an hour; ten fit in 7,200.
    const answers: number[] = [];
    const made: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await as('POST', '/api/triggers', { name: `rate ${i}`, condition: smallest });
      answers.push(res.statusCode);
      if (res.statusCode === 201) made.push(res.json().id);
      else {
        expect(res.statusCode).toBe(409);
        expect(res.json()).toMatchObject({ code: 'limit_reached' });
        expect(res.json().detail).toMatch(/costs 720 store reads an hour .* 7200 .*patternRateReadsPerHour/);
      }
    }
    expect(answers.filter((c) => c === 201)).toHaveLength(10);
    expect(answers.filter((c) => c === 409)).toHaveLength(90);
    // A disabled trigger costs nothing; enabling it again is checked.
    const first = made[0] as number;
    expect((await as('PATCH', `/api/triggers/${first}`, { enabled: false })).statusCode).toBe(200);
    const wider = await as('POST', '/api/triggers', {
      name: 'wider',
      condition: { ...smallest, window_seconds: 20 },
    });
    expect(wider.statusCode, wider.body).toBe(201);
    expect((await as('PATCH', `/api/triggers/${first}`, { enabled: true })).statusCode).toBe(409);
    // Changing a trigger counts it once, not twice.
    const second = made[1] as number;
    const same = await as('PATCH', `/api/triggers/${second}`, { condition: { ...smallest, min_count: 5 } });
    expect(same.statusCode, same.body).toBe(200);
  });
});
