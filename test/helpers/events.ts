import type { StoredEvent } from '../../src/core/event.js';
import { SYSTEM_SCOPE } from '../../src/event-store/read-scope.js';
import type { TestApp } from './app.js';

/**
 * The stored events `keep` accepts, in ev_id order, read back through the event store's
 * own stream beside the API (tests only; the same on every store).
 */
export async function storedEvents(
  t: TestApp,
  keep: (e: StoredEvent) => boolean = () => true,
): Promise<StoredEvent[]> {
  const events: StoredEvent[] = [];
  for await (const e of t.rt.events.stream({
    kind: 'search',
    scope: SYSTEM_SCOPE,
    filter: { kind: 'true' },
    range: { fromMs: -8.64e15, toMs: 8.64e15 },
    sort: [{ field: 'ev_id', desc: false }],
    limit: Number.MAX_SAFE_INTEGER,
    offset: 0,
    count: false,
  }))
    if (keep(e)) events.push(e);
  return events;
}

/** `message` of an event as text ('' when it has none), for predicates. */
export const messageOf = (e: StoredEvent): string => e.message ?? '';

const DAY_MS = 86_400_000;

/**
 * Noon UTC of the day `back` days before `now`: events a test files by UTC day sit there,
 * far from midnight whenever the test runs (spread over minutes before midnight, they
 * would make a day more).
 */
export const noonDaysBack = (back: number, now = Date.now()): number =>
  Math.floor((now - back * DAY_MS) / DAY_MS) * DAY_MS + DAY_MS / 2;
