import type { NormalisedEvent } from '../core/event.js';
import { newEventId } from '../core/ids.js';
import { counter, type MetricDecl } from '../core/metrics.js';
import type { Batcher } from './batcher.js';
import { normaliseRecord } from './normalise.js';
import type { ParsedEntry } from './parsers/ndjson.js';
import type { PipelineSet } from './pipelines/pipeline.js';

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
 * Turns of the event loop for pieces: at most one piece's work (normalise, pipelines,
 * mining) runs per turn, so timers and other sockets are served between two pieces,
 * whichever requests they are of.
 */
class Turns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate queued by an immediate runs on the next turn of the loop.
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      this.schedule();
    });
  }
}

/**
 * Turns parsed records into events and hands the accepted ones to the batcher; resolves
 * once they are durable. A rejected record never stops the others.
 */
export class IngestService {
  /** Records refused (malformed, too many fields, ...) since start. */
  rejectedRecords = 0;
  private readonly turns = new Turns();

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
    /** Gives each event its template's id, after pipelines (components/patterns). */
    private readonly patterns: { assign(events: NormalisedEvent[]): void } | null = null,
  ) {}

  /** `intake` says where the records came in (`http:<user>`, `syslog:<address>`). */
  async ingest(entries: readonly ParsedEntry[], intake: string | null): Promise<IngestOutcome> {
    return this.ingestPieces([() => entries], intake);
  }

  /**
   * A large request in pieces (see parsers/chunked.ts): each piece is parsed, normalised,
   * committed and awaited before the next is parsed, with a turn of the event loop
   * between, so memory holds one piece of parsed records and events at a time and other
   * requests are served meanwhile. The queue bound (503) is checked for the first piece
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
      await this.turns.take();
      const events: NormalisedEvent[] = [];
      for (const entry of pieces[p]!()) {
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
      // Before the batcher: triggers and live tails see events as they are stored.
      const stored = this.pipelines()?.process(events) ?? events;
      this.patterns?.assign(stored);
      await this.batcher.submit(stored, { admitted: p > 0 });
      outcome.accepted += events.length;
      options.afterPiece?.(p, outcome);
    }
    return outcome;
  }
}
