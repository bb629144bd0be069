import { newUlid } from '../core/ids.js';
import type { Batcher } from './batcher.js';
import { normaliseRecord } from './normalise.js';
import type { ParsedEntry } from './parsers/ndjson.js';

/** At most this many per-record errors are listed in an answer (API.md §7). */
export const MAX_LISTED_ERRORS = 100;

export interface IngestOutcome {
  accepted: number;
  rejected: number;
  errors: Array<{ index: number; detail: string }>;
  /** Per entry: its ev_id when accepted, or its error (for the ES bulk answer). */
  items: Array<{ ev_id: string } | { error: string }>;
}

/**
 * Turns parsed records into events and hands the accepted ones to the batcher; resolves
 * once they are durable. A rejected record never stops the others.
 */
export class IngestService {
  /** Records refused (malformed, too many fields, ...) since start, for /metrics. */
  rejectedRecords = 0;

  constructor(private readonly batcher: Batcher) {}

  /** `intake` says where the records came in (`http:<user>`, `syslog:<address>`). */
  async ingest(entries: readonly ParsedEntry[], intake: string | null): Promise<IngestOutcome> {
    const receivedAt = Date.now();
    const ctx = { receivedAt, intake, newId: () => newUlid(receivedAt) };
    const events = [];
    const errors: IngestOutcome['errors'] = [];
    const items: IngestOutcome['items'] = [];
    let rejected = 0;
    for (const entry of entries) {
      const result =
        entry.error === undefined
          ? normaliseRecord(entry.value, ctx)
          : { ok: false as const, detail: entry.error };
      if (result.ok) {
        events.push(result.event);
        items.push({ ev_id: result.event.ev_id });
      } else {
        rejected++;
        items.push({ error: result.detail });
        if (errors.length < MAX_LISTED_ERRORS) errors.push({ index: entry.index, detail: result.detail });
      }
    }
    this.rejectedRecords += rejected;
    await this.batcher.submit(events);
    return { accepted: events.length, rejected, errors, items };
  }
}
