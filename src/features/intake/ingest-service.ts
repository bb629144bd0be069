import { setImmediate as nextTurn } from 'node:timers/promises';
import type { NormalisedEvent } from '../../core/event.js';
import { newEventId } from '../../core/ids.js';
import { counter, type MetricDecl } from '../../core/metrics.js';
import type { Batcher } from '../../ingest/batcher.js';
import { normaliseRecord } from '../../ingest/normalise.js';
import type { ParsedEntry } from '../../ingest/parsers/ndjson.js';
import type { PipelineSet } from '../../ingest/pipelines/pipeline.js';

/** At most this many per-record errors are listed in an answer. */
export const MAX_LISTED_ERRORS = 100;

export interface IngestOutcome {
  accepted: number;
  rejected: number;
  errors: Array<{ index: number; detail: string }>;
  /** Per entry: its ev_id when accepted, or its error (for the ES bulk answer). */
  items: Array<{ ev_id: string } | { error: string }>;
}

export interface IngestPiecesOptions {
  /** Keep `items` (one per record; the ES bulk answer needs them). Default true. */
  items?: boolean;
  /** Called once a piece is stored (to drop what it held), with the outcome so far. */
  afterPiece?: (piece: number, soFar: IngestOutcome) => void;
}

/**
 * Records normalised, piped and mined between two turns of the event loop: ~250 × 25 µs,
 * so timers and sockets wait a few milliseconds, not a whole 1,000-record request.
 */
export const SLICE_RECORDS = 250;

/**
 * One piece at a time, in order of arrival, each let in on a turn of the event loop of
 * its own: a piece's slices follow each other with the loop turning between them, and
 * another request's piece waits for the whole piece (interleaved, every request would
 * wait for all the others' slices), not for its commit.
 */
class Lane {
  private readonly waiting: Array<() => void> = [];
  private held = false;

  enter(): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push(() => resolve(this.leave()));
      this.admit();
    });
  }

  private admit(): void {
    if (this.held || this.waiting.length === 0) return;
    this.held = true;
    setImmediate(() => this.waiting.shift()?.());
  }

  private leave(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.held = false;
      this.admit();
    };
  }
}

/**
 * Turns parsed records into events and hands the accepted ones to the batcher; resolves
 * once they are durable. A rejected record never stops the others.
 */
export class IngestService {
  /** Records refused (malformed, too many fields, ...) since start. */
  rejectedRecords = 0;
  private readonly lane = new Lane();

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_ingest_rejected_total',
        'Records refused at ingest (malformed or over limits).',
        () => this.rejectedRecords,
      ),
    ];
  }

  /**
   * `pipelines` gives the pipelines to run (read once per piece, so a change applies
   * from the next piece on); none by default.
   */
  constructor(
    private readonly batcher: Batcher,
    private readonly pipelines: () => PipelineSet | null = () => null,
    /** Gives each event its template's id, after pipelines (features/patterns). */
    private readonly patterns: {
      assign(events: NormalisedEvent[]): void;
      remap(events: NormalisedEvent[]): void;
    } | null = null,
  ) {}

  /** `intake` says where the records came in (`http:<user>`, `syslog:<address>`). */
  async ingest(entries: readonly ParsedEntry[], intake: string | null): Promise<IngestOutcome> {
    return this.ingestPieces([() => entries], intake);
  }

  /**
   * A large request in pieces (see parsers/chunked.ts): each piece is parsed, normalised,
   * committed and awaited before the next is parsed, with turns of the event loop
   * between its slices (`Lane`), so memory holds one piece of parsed records and events
   * at a time and other requests are served meanwhile. The queue bound (503) is checked for the first piece
   * only: a request once admitted is not refused half-way by other requests filling the
   * queue (memory stays bounded: one piece per admitted request beyond the bound). A
   * failing commit (disk full) stops the request with that error; the pieces committed
   * before it stay stored.
   */
  async ingestPieces(
    pieces: ReadonlyArray<() => readonly ParsedEntry[]>,
    intake: string | null,
    options: IngestPiecesOptions = {},
  ): Promise<IngestOutcome> {
    const receivedAt = Date.now();
    const ctx = { receivedAt, intake, newId: () => newEventId(receivedAt) };
    const outcome: IngestOutcome = { accepted: 0, rejected: 0, errors: [], items: [] };
    const keepItems = options.items ?? true;
    for (let p = 0; p < pieces.length; p++) {
      const leave = await this.lane.enter();
      const stored: NormalisedEvent[] = [];
      let accepted = 0;
      try {
        const entries = pieces[p]!();
        const pipelines = this.pipelines();
        for (let at = 0; at < entries.length; at += SLICE_RECORDS) {
          if (at > 0) await nextTurn();
          const events: NormalisedEvent[] = [];
          const end = Math.min(entries.length, at + SLICE_RECORDS);
          for (let i = at; i < end; i++) {
            const entry = entries[i] as ParsedEntry;
            const result =
              entry.error === undefined
                ? normaliseRecord(entry.value, entry.meta ? { ...ctx, meta: entry.meta } : ctx)
                : { ok: false as const, detail: entry.error };
            if (result.ok) {
              events.push(result.event);
              if (keepItems) outcome.items.push({ ev_id: result.event.ev_id });
            } else {
              outcome.rejected++;
              this.rejectedRecords++;
              if (keepItems) outcome.items.push({ error: result.detail });
              if (outcome.errors.length < MAX_LISTED_ERRORS) {
                outcome.errors.push({ index: entry.index, detail: result.detail });
              }
            }
          }
          accepted += events.length;
          // Before the batcher: triggers and live tails see events as they are stored.
          const piped = pipelines?.process(events) ?? events;
          this.patterns?.assign(piped);
          for (const event of piped) stored.push(event);
        }
      } finally {
        leave();
      }
      // An id merged away while the piece was read is the one it went into (features/patterns).
      this.patterns?.remap(stored);
      await this.batcher.submit(stored, { admitted: p > 0 });
      outcome.accepted += accepted;
      options.afterPiece?.(p, outcome);
    }
    return outcome;
  }
}
