import type { Log } from '../../core/log.js';
import { counter, type MetricDecl, type MetricsSource } from '../../core/metrics.js';
import type { EventStore } from '../../event-store/event-store.js';
import type { FilterNode } from '../../filter/ast.js';
import { or } from '../../filter/builders.js';
import { membership, type StreamRow, streamRules } from '../streams/index.js';

const DAY_MS = 86_400_000;

export interface ColdRound {
  files: number;
  events: number;
  errors: string[];
}

/**
 * The cold tier's rounds (docs/operations/cold-tier.md, ADR 0031). An event moves once its
 * `ts` is older than the `hot_days` of every stream it belongs to (the longest wins, null
 * counting as never): for each distinct `hot_days`, the events older than it move except
 * those a stream keeping them hot longer claims, each filed under its home stream (the
 * lowest-id stream other than Default whose rule matches it, else Default). A round that
 * cannot write leaves the events hot and is tried again the next round.
 */
export class ColdMoves implements MetricsSource {
  private readonly totals = { moved: 0, errors: 0 };
  private running: Promise<ColdRound> | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly streams: { all(): Promise<StreamRow[]> },
    private readonly log: Log,
  ) {}

  /** One round; a round asked for while one runs waits for it and returns its figures. */
  run(now = Date.now()): Promise<ColdRound> {
    this.running ??= this.round(now).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(now: number): Promise<ColdRound> {
    const out: ColdRound = { files: 0, events: 0, errors: [] };
    const rows = await this.streams.all();
    const filters = membership(rows);
    const homes = streamRules(rows).streams;
    const defaultId = rows.find((r) => r.builtin)?.id ?? 1;
    const levels = [...new Set(rows.map((r) => r.hot_days).filter((d): d is number => d !== null))].sort(
      (a, b) => a - b,
    );
    for (const d of levels) {
      // Kept hot: the events of every stream that keeps them longer than d days (or always).
      const keep = rows
        .filter((r) => r.hot_days === null || r.hot_days > d)
        .map((r) => filters.get(r.id))
        .filter((f): f is FilterNode => f !== undefined);
      const [first, ...rest] = keep;
      const r = await this.store.moveCold({
        cutMs: now - d * DAY_MS,
        ...(first ? { keep: or(first, ...rest) } : {}),
        homes,
        defaultId,
        nowMs: now,
      });
      if (!r) break;
      out.files += r.files;
      out.events += r.events;
      out.errors.push(...r.errors);
    }
    this.totals.moved += out.events;
    this.totals.errors += out.errors.length;
    for (const e of out.errors)
      this.log.warn(
        { error: e },
        'cold tier: a stream-day could not move; it stays hot and is tried again next round',
      );
    return out;
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_cold_moved_events_total',
        'Events moved into the cold tier.',
        () => this.totals.moved,
      ),
      counter(
        'logscope_cold_move_errors_total',
        'Stream-days the cold tier could not move (left hot, tried again next round).',
        () => this.totals.errors,
      ),
    ];
  }
}
