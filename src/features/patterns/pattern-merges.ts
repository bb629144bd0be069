import type { NormalisedEvent } from '../../core/event.js';

/**
 * When a merge's stored events are rewritten, after it (ms): once the batches handed to the
 * store before it are stored (a request's events are remapped before they are handed on:
 * `remap`), and once more for one stored late.
 */
export const REWRITE_AFTER_MS: readonly number[] = [2_000, 30_000];

/** Merged ids whose stored events are rewritten at `at`, over the span their events had. */
export interface DueRewrite {
  at: number;
  pairs: Array<[from: string, to: string]>;
  range: { fromMs: number; toMs: number };
}

/** Merges remembered for resolving ids (the oldest let go of first: their events were rewritten long ago). */
const KEPT = 100_000;

/**
 * Templates the miner merged (a slot's third word showed a variable: docs/api/patterns.md),
 * until their stored events and rows follow: the ids each was merged into, resolved to the
 * last (`a` into `b`, then `b` into `c`: `a` is `c`'s).
 */
export class PatternMerges {
  /** A merged id → the id it went into, as the miner said. */
  private readonly into = new Map<string, string>();
  /** Merged since the last `take`, for the metadata and event stores. */
  private pending = new Map<string, string>();

  /** The miner merged `merged` into `into`. */
  note(into: string, merged: readonly string[]): void {
    // `into` lives: were it merged away before (a template learnt again), that is over, so
    // no chain leads back to where it began.
    this.into.delete(into);
    this.pending.delete(into);
    for (const id of merged) {
      if (id === into) continue;
      this.into.set(id, into);
      this.pending.set(id, into);
    }
    for (const oldest of this.into.keys()) {
      if (this.into.size <= KEPT) break;
      this.into.delete(oldest);
    }
  }

  /** The id a merged one now is (itself when never merged). */
  resolve(id: string): string {
    let at = id;
    // Bounded: a chain is as long as the merges made in one process.
    for (let next = this.into.get(at), steps = 0; next !== undefined && steps < 64; steps++) {
      at = next;
      next = this.into.get(at);
    }
    return at;
  }

  /** Events given an id that was merged away since take the one it went into. */
  remap(events: NormalisedEvent[]): void {
    if (this.into.size === 0) return;
    for (const e of events)
      if (e.pattern_id && this.into.has(e.pattern_id)) e.pattern_id = this.resolve(e.pattern_id);
  }

  /** What was merged since the last call, each merged id with the id it now is. */
  take(): Array<[from: string, to: string]> {
    const out = [...this.pending.keys()]
      .map((id): [string, string] => [id, this.resolve(id)])
      .filter(([from, to]) => from !== to);
    this.pending = new Map();
    return out;
  }

  /** Rewrites of stored events to come. */
  private due: DueRewrite[] = [];

  /** The stored events of these merged ids are to be rewritten (at each of REWRITE_AFTER_MS from `now`). */
  schedule(pairs: Array<[string, string]>, range: DueRewrite['range'], now: number): void {
    for (const after of REWRITE_AFTER_MS) this.due.push({ at: now + after, pairs, range });
  }

  /** The rewrites due at `now` (all of them: `all`), taken out. */
  takeDue(now: number, all = false): DueRewrite[] {
    const ready = this.due.filter((d) => all || d.at <= now);
    if (ready.length) this.due = this.due.filter((d) => !ready.includes(d));
    return ready;
  }

  /** A rewrite that failed, tried again a while later. */
  retry(d: DueRewrite, now: number): void {
    this.due.push({ ...d, at: now + (REWRITE_AFTER_MS[0] ?? 5_000) });
  }

  /** Puts back what could not be written, for the next time. */
  keep(pairs: ReadonlyArray<readonly [string, string]>): void {
    for (const [from, to] of pairs) if (!this.pending.has(from)) this.pending.set(from, to);
  }
}
