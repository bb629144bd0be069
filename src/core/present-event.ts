import type { StoredEvent } from './event.js';

const seconds = (ms: number) => ms / 1000;

/**
 * The JSON representation of an event (API.md §3): every column, every extra field by
 * its dotted name, and times as Unix seconds with millisecond precision.
 */
export function presentEvent(e: StoredEvent): Record<string, unknown> {
  const { fields, ...columns } = e;
  return {
    ...fields,
    ...columns,
    ts: seconds(e.ts),
    received_at: seconds(e.received_at),
    stored_at: seconds(e.stored_at),
  };
}
