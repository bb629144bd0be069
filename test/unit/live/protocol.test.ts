import { describe, expect, it } from 'vitest';
import { updateFrame } from '../../../src/features/live/protocol.js';
import type { GenericQuery } from '../../../src/features/queries/queries-service.js';

const query = (results: unknown): GenericQuery => ({
  query_id: 'q1',
  status: 'SUCCESS',
  type: 'Search',
  base_time: 1,
  results,
  params: { page_size: 3 },
  owner_id: 1,
  error: null,
  progress: 1,
  created_at: '2026-11-20T12:00:00.000Z',
  updated_at: '2026-11-20T12:00:00.000Z',
  cold: null,
  answered_from: 'events' as const,
});

describe('live update frames', () => {
  it('are the JSON of the widget-update message', () => {
    const data = query({
      total: 3,
      skipped: undefined,
      events: [{ ev_id: 'a', ts: 1.5, message: 'ž "q"\n' }, null, { at: new Date(0), n: [1, [2, {}]] }],
      empty: [],
      nothing: {},
    });
    const w = { widgetId: 5, dashboardId: null };
    const frame = updateFrame(w, data, 1 << 20);
    expect(frame?.toString()).toBe(
      JSON.stringify(['widget-update', { widget_id: 5, dashboard_id: null, data }]),
    );
  });

  it('stop being written as soon as they pass the limit', () => {
    // Before, the whole update became one string first (past V8's longest, a RangeError
    // after hundreds of megabytes were built); here no event past the limit is read.
    let read = 0;
    const events = Array.from({ length: 100_000 }, (_, i) => ({
      toJSON() {
        read++;
        return { ev_id: String(i), message: 'x'.repeat(100) };
      },
    }));
    expect(updateFrame({ widgetId: null, dashboardId: null }, query({ events }), 64 * 1024)).toBeNull();
    expect(read).toBeGreaterThan(500);
    expect(read).toBeLessThan(700);
    const fits = updateFrame(
      { widgetId: null, dashboardId: null },
      query({ events: events.slice(0, 10) }),
      64 * 1024,
    );
    expect(JSON.parse(String(fits))[1].data.results.events).toHaveLength(10);
  });
});
