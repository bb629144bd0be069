import { emptyEvent, type NormalisedEvent } from '../../src/core/event.js';
import { newEventId } from '../../src/core/ids.js';
import type { TestApp } from './app.js';

/** A base time on a whole hour, so ranges in tests are easy to reason about. */
export const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

export function event(partial: Partial<NormalisedEvent> & { ts: number }): NormalisedEvent {
  return emptyEvent({
    // The id's time is the event's, whatever ids this process made before (newUlid's
    // monotonic ids would carry a later time from an earlier test file on).
    ev_id: newEventId(partial.received_at ?? partial.ts),
    received_at: partial.ts,
    intake: 'test',
    ...partial,
  });
}

/**
 * 600 web events over one hour from T0, one every 6 s: status 200 (4 in 6), 404, 500;
 * hosts web-1..3; bytes i; paths in fields. Returns them in time order.
 */
export async function seedWeb(t: TestApp): Promise<NormalisedEvent[]> {
  const statuses = [200, 200, 200, 200, 404, 500];
  const events = Array.from({ length: 600 }, (_, i) =>
    event({
      ts: T0 + i * 6000,
      host: `web-${(i % 3) + 1}`,
      app: 'nginx',
      severity: statuses[i % 6] === 500 ? 'error' : 'info',
      message: `GET /page/${i % 10} status ${statuses[i % 6]}`,
      src_ip: `10.0.${i % 4}.${(i % 50) + 1}`,
      status: statuses[i % 6] as number,
      bytes: i,
      fields: { 'http.path': `/page/${i % 10}`, 'http.method': i % 2 ? 'GET' : 'POST' },
    }),
  );
  await t.rt.events.append(events);
  return events;
}

export const HOUR = { ts_from: T0 / 1000, ts_to: T0 / 1000 + 3600 };
