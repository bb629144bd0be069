import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKEND, createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { eventually } from '../../helpers/eventually.js';

type Ev = { ev_id: string; message: string; pattern_id: string | null };

/**
 * Templates merged when a slot's third word shows a variable (docs/api/patterns.md): the
 * events stored under the merged template's id take the id it went into, its row goes into
 * that one's, and what comes after gets that id at once.
 */
describe(`merged patterns (${BACKEND}, ${EVENT_STORE})`, () => {
  let t: TestApp;
  const T = Math.floor(Date.now() / 1000) - 600;
  const send = async (lines: object[]) => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/ingest',
      headers: { authorization: `token ${t.adminToken}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.json()).toMatchObject({ accepted: lines.length });
  };
  const search = async (query: string): Promise<Ev[]> => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/query',
      headers: { authorization: `token ${t.adminToken}` },
      payload: { type: 'Search', params: { query, time_range: { preset: 'last_hour' }, page_size: 100 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results.events;
  };
  const pattern = (id: string) =>
    t.app.inject({
      method: 'GET',
      url: `/api/patterns/${id}`,
      headers: { authorization: `token ${t.adminToken}` },
    });
  const line = (user: string, i: number) => ({
    app: 'worker',
    host: 'w1',
    message: `session opened for user ${user} by uid ${i}`,
    timestamp: T + i,
  });

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('keeps two words at a place apart, and merges the stored events when a third comes', async () => {
    await send([line('root', 1), line('root', 2), line('news', 3), line('news', 4)]);
    const before = await search('app:worker');
    const ids = new Set(before.map((e) => e.pattern_id));
    expect(ids.size).toBe(2);
    const root = before.find((e) => e.message.includes('root'))?.pattern_id as string;
    const news = before.find((e) => e.message.includes('news'))?.pattern_id as string;
    expect((await pattern(news)).statusCode).toBe(200);

    await send([line('cyrus', 5), line('news', 6)]);
    // The new events take the first template's id at once; the stored ones follow.
    const after = await eventually(
      'the stored events to take the id their template was merged into',
      async () => {
        const events = await search('app:worker');
        return events.length === 6 && events.every((e) => e.pattern_id === root) && events;
      },
      { withinMs: 20_000, everyMs: 250 },
    );
    expect(after).toHaveLength(6);
    expect((await pattern(news)).statusCode).toBe(404);
    const merged = await pattern(root);
    expect(merged.statusCode).toBe(200);
    expect(merged.json()).toMatchObject({
      template: 'session opened for user <*> by uid <*>',
      count: 6,
      first_seen: T + 1,
      last_seen: T + 6,
    });
    // A search by the merged id finds nothing: every event moved.
    expect(await search(`pattern_id:${news}`)).toHaveLength(0);
  }, 40_000);

  it('merges the stored events of a template merged before its row was first written', async () => {
    const job = (name: string, i: number) => ({
      app: 'batch',
      host: 'w1',
      message: `job finished for tenant ${name} in step ${i}`,
      timestamp: T + 100 + i,
    });
    // Two requests within the second between two writes of the templates: the second
    // merges the first's templates, none of which has a row yet.
    await send([job('alpha', 1), job('alpha', 2), job('bravo', 3), job('bravo', 4)]);
    await send([job('charlie', 5)]);
    const after = await eventually(
      'the stored events to take the id their template was merged into',
      async () => {
        const events = await search('app:batch');
        return events.length === 5 && new Set(events.map((e) => e.pattern_id)).size === 1 && events;
      },
      { withinMs: 20_000, everyMs: 250 },
    );
    const id = after[0]?.pattern_id as string;
    const merged = await pattern(id);
    expect(merged.statusCode).toBe(200);
    expect(merged.json()).toMatchObject({ template: 'job finished for tenant <*> in step <*>', count: 5 });
  }, 40_000);
});
