import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalisedEvent } from '../../../src/core/event.js';
import { createTestApp, EVENT_STORE, type TestApp } from '../../helpers/app.js';
import { event } from '../../helpers/seed.js';

// An event's context across the tier boundary (docs/operations/cold-tier.md: every read
// answers as if every event were hot): after a move, the context of the events at the
// boundary on either side, and at each end of a source, answers as it did when every
// event was hot, `before` and `after`, and so do the pages its cursors continue to. Two
// sources: one whose older events move and newer stay hot, one whose events all move
// while the hot tier holds nothing as new as them.

const DAY = 86_400_000;
const HOUR = 3_600_000;
const now = Date.now();

describe.skipIf(EVENT_STORE !== 'duckdb')('an event’s context across the cold tier’s boundary', () => {
  let t: TestApp;
  const web: NormalisedEvent[] = [];
  const batch: NormalisedEvent[] = [];
  const anchors: Array<[string, NormalisedEvent]> = [];
  const CONTEXTS = ['before=25&after=25', 'before=25&after=25&by=', 'before=3&after=3'];
  const context = async (id: string, params: string) => {
    const res = await t.as(t.adminToken, { method: 'GET', url: `/api/events/${id}/context?${params}` });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { before: unknown[]; after: unknown[]; before_cursor: string; after_cursor: string };
  };
  /** Each anchor's contexts, and the next page of each side where it has one. */
  const answers = async () => {
    const out: Record<string, unknown> = {};
    for (const [name, e] of anchors)
      for (const params of CONTEXTS) {
        const c = await context(e.ev_id, params);
        out[`${name} ${params}`] = c;
        for (const side of ['before', 'after'] as const) {
          const cursor = c[`${side}_cursor`];
          if (cursor)
            out[`${name} ${params} ${side} next`] = await context(e.ev_id, `cursor=${cursor}&${side}=4`);
        }
      }
    return out;
  };
  let allHot: Record<string, unknown>;

  beforeAll(async () => {
    t = await createTestApp();
    const post = (url: string, payload: object) => t.as(t.adminToken, { method: 'POST', url, payload });
    const streams = (await t.as(t.adminToken, { method: 'GET', url: '/api/streams' })).json()
      .results as Array<{ id: number; builtin: boolean }>;
    const defaultId = streams.find((s) => s.builtin)?.id;
    const d = await t.as(t.adminToken, {
      method: 'PATCH',
      url: `/api/streams/${defaultId}`,
      payload: { hot_days: 8 },
    });
    expect(d.statusCode, d.body).toBe(200);
    const b = await post('/api/streams', { title: 'Batch', rule: 'app:batch', hot_days: 1 });
    expect(b.statusCode, b.body).toBe(201);
    // Half an hour off every cut: the round the server runs itself soon after start moves
    // the same events. Web: 5-10 days old, cold past 8. Batch: 1.5-3.2 days old, all cold,
    // newer than every hot event.
    for (let i = 0; i < 120; i++)
      web.push(
        event({ ts: now - 5 * DAY - HOUR / 2 - i * HOUR, host: 'w1', app: 'web', message: `web ${i}` }),
      );
    for (let i = 0; i < 40; i++)
      batch.push(event({ ts: now - 1.5 * DAY - i * HOUR, host: 'b1', app: 'batch', message: `batch ${i}` }));
    await t.rt.events.append([...web, ...batch]);
    const cut = now - 8 * DAY;
    const webCold = web.filter((e) => e.ts < cut);
    const webHot = web.filter((e) => e.ts >= cut);
    expect(webCold.length).toBeGreaterThan(25);
    expect(webHot.length).toBeGreaterThan(25);
    // Newest first, as pushed.
    anchors.push(
      ['web newest cold', webCold[0] as NormalisedEvent],
      ['web oldest hot', webHot[webHot.length - 1] as NormalisedEvent],
      ['web oldest', web[web.length - 1] as NormalisedEvent],
      ['web newest', web[0] as NormalisedEvent],
      ['batch oldest', batch[batch.length - 1] as NormalisedEvent],
      ['batch newest', batch[0] as NormalisedEvent],
    );
    allHot = await answers();
    const round = await t.rt.services.coldMoves.run(now);
    expect(round.errors).toEqual([]);
    expect(round.events).toBe(webCold.length + batch.length);
  }, 60_000);
  afterAll(() => t?.close());

  it('answers the context of events at the boundary, before and after, as when every event was hot', async () => {
    const [, newestCold] = anchors[0] as [string, NormalisedEvent];
    const [, oldestBatch] = anchors[4] as [string, NormalisedEvent];
    // What answered none while the store's span was the hot tier's: 25 before the newest
    // cold event, 25 after the oldest of a source all cold.
    expect((await context(newestCold.ev_id, 'before=25')).before).toHaveLength(25);
    expect((await context(oldestBatch.ev_id, 'after=25')).after).toHaveLength(25);
    expect(await answers()).toEqual(allHot);
  });
});
