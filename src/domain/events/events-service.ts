import type { StoredEvent } from '../../core/event.js';
import { presentEvent } from '../../core/present-event.js';
import { notFound } from '../../errors/errors.js';
import type { EventStore } from '../../event-store/event-store.js';
import { toRawRecord } from '../../ingest/normalise.js';

const seconds = (ms: number) => ms / 1000;

/** An event with `raw`: the record rebuilt from its columns (GET /api/events/{ev_id}). */
export const presentEventWithRaw = (e: StoredEvent) => ({ ...presentEvent(e), raw: toRawRecord(e) });

/** One trigger an event matched (API.md §7). */
export interface TriggerMatch {
  trigger_id: number;
  name: string;
  severity: string;
  description: string;
  matched_at: number;
  task_id: number | null;
}

export class EventsService {
  constructor(private readonly store: EventStore) {}

  private async load(evId: string): Promise<StoredEvent> {
    const e = await this.store.getById(evId);
    if (!e) throw notFound('No such event.');
    return e;
  }

  async get(evId: string) {
    return presentEventWithRaw(await this.load(evId));
  }

  async timestamps(evId: string) {
    const e = await this.load(evId);
    return {
      ev_id: e.ev_id,
      event_time: seconds(e.ts),
      received_time: seconds(e.received_at),
      stored_time: seconds(e.stored_at),
    };
  }

  /** Trigger matches arrive with the triggers feature; until then every list is empty. */
  async triggers(evId: string) {
    const e = await this.load(evId);
    return { ev_id: e.ev_id, triggers: [] as TriggerMatch[] };
  }
}
