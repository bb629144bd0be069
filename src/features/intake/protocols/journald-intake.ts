import type { EventStore } from '../../../event-store/event-store.js';
import { SYSTEM_SCOPE } from '../../../event-store/read-scope.js';
import { and, cond } from '../../../filter/ast.js';
import { PIECE_BYTES, PIECE_RECORDS } from '../../../ingest/parsers/chunked.js';
import type { ParsedEntry } from '../../../ingest/parsers/ndjson.js';
import {
  type JournalEntry,
  JournalExportParser,
  JournalFormatError,
} from '../../../ingest/protocols/journald.js';
import type { IngestService } from '../ingest-service.js';

/**
 * Largest journal entry taken. journald itself keeps fields of up to 64 KiB by default
 * (and Logscope's message is cut there); an entry of 1 MiB leaves room for many fields.
 */
export const JOURNAL_MAX_ENTRY_BYTES = 1 << 20;

/** Cursors looked up in one query of the duplicate check (FILTER_LIMITS allows 1000 nodes). */
const CURSORS_PER_CHECK = 500;

export interface JournalUploadOutcome {
  stored: number;
  /** Entries at the head of the upload that were already stored (see the class comment). */
  skipped: number;
}

/** A malformed stream: the entries before the error were stored. */
export class JournalUploadError extends Error {
  override name = 'JournalUploadError';
  constructor(
    message: string,
    readonly stored: number,
  ) {
    super(message);
  }
}

/**
 * One upload of `systemd-journal-upload`: the body parsed as it arrives and stored in
 * pieces, each durable before more is read, so an upload of any length (the first one
 * is the whole journal) is taken in bounded memory.
 *
 * Exactly once: the uploader starts each upload at its saved cursor and, in systemd 252
 * (Debian 12), sends the entry AT that cursor again, which was already acknowledged; an
 * upload cut off after some pieces were stored is also sent again from the last
 * acknowledged cursor. So the head of each upload is checked against the store: entries
 * whose `__CURSOR` is already stored (looked up by cursor within their own timestamps,
 * a few hundred per query) are skipped, until one is new; the rest of the stream is new
 * by the journal's order. The check reads the store, not memory, so it holds across
 * restarts of Logscope and across the nodes of a cluster.
 */
export class JournaldIntake {
  constructor(
    private readonly ingest: IngestService,
    private readonly store: EventStore,
  ) {}

  async upload(body: AsyncIterable<Buffer>, source: string): Promise<JournalUploadOutcome> {
    const parser = new JournalExportParser({ maxEntryBytes: JOURNAL_MAX_ENTRY_BYTES });
    const outcome: JournalUploadOutcome = { stored: 0, skipped: 0 };
    let piece: JournalEntry[] = [];
    let pieceBytes = 0;
    let checking = true;
    const store = async () => {
      const entries = piece;
      piece = [];
      pieceBytes = 0;
      // The leading run of entries stored already is skipped; the first new one ends the
      // check (the journal is sent in its order).
      let start = 0;
      while (checking && start < entries.length) {
        const head = entries.slice(start, start + CURSORS_PER_CHECK);
        const seen = await this.storedCursors(head);
        let known = 0;
        while (known < head.length && seen.has(cursorOf(head[known]!) ?? '')) known++;
        start += known;
        outcome.skipped += known;
        if (known < head.length) checking = false;
      }
      if (start >= entries.length) return;
      const parsed: ParsedEntry[] = entries.slice(start).map((e, index) => ({ index, value: e.record }));
      await this.ingest.ingestPieces([() => parsed], source, { items: false });
      outcome.stored += parsed.length;
    };
    const take = async (entries: JournalEntry[]) => {
      for (const entry of entries) {
        piece.push(entry);
        pieceBytes += entry.bytes;
        if (piece.length >= PIECE_RECORDS || pieceBytes >= PIECE_BYTES) await store();
      }
    };
    try {
      for await (const chunk of body) await take(parser.push(chunk));
      await take(parser.end());
    } catch (error) {
      if (!(error instanceof JournalFormatError)) throw error;
      await take(error.completed);
      await store();
      throw new JournalUploadError(error.message, outcome.stored);
    }
    await store();
    return outcome;
  }

  /** Which of these entries' cursors are stored already. */
  private async storedCursors(entries: readonly JournalEntry[]): Promise<Set<string>> {
    const cursors: string[] = [];
    let fromMs = Number.POSITIVE_INFINITY;
    let toMs = Number.NEGATIVE_INFINITY;
    for (const entry of entries) {
      const cursor = cursorOf(entry);
      const us = entry.record.__REALTIME_TIMESTAMP;
      if (cursor === undefined || typeof us !== 'string' || !/^\d{1,17}$/.test(us)) continue;
      const ms = Math.floor(Number(us) / 1000);
      cursors.push(cursor);
      fromMs = Math.min(fromMs, ms);
      toMs = Math.max(toMs, ms + 1);
    }
    if (cursors.length === 0) return new Set();
    // The intake's own duplicate check: for no user, over every event.
    const found = await this.store.execute({
      kind: 'search',
      scope: SYSTEM_SCOPE,
      filter: and(cond('__CURSOR', 'in', cursors)),
      range: { fromMs, toMs },
      sort: [],
      limit: cursors.length,
      offset: 0,
      count: false,
    });
    return new Set(found.events.map((e) => e.fields.__CURSOR ?? ''));
  }
}

const cursorOf = (entry: JournalEntry): string | undefined => {
  const cursor = entry.record.__CURSOR;
  return typeof cursor === 'string' ? cursor : undefined;
};
