/**
 * The `pattern_rate` trigger condition (docs/api/alerting.md): a kind of message (pattern)
 * surges, appears, drops or disappears. Windows aligned on Unix time are judged once each,
 * a settle time after they end, by counting per `pattern_id` in the event store (through
 * `WindowReads`, which carry the trigger's filter and its reader's scope): nothing here
 * sees an event, only counts of what the trigger's reader may read.
 */
import { changeScore, round3 } from '../../core/change-score.js';
import type { AlertTrigger, Firing } from './alert-engine.js';
import type { PatternRateCondition } from './conditions.js';
import type { Notification } from './notification.js';
import type { Sample } from './threshold.js';

export type PatternChange = NonNullable<Notification['change']>;

/** A condition as a client may send it: every setting but `type` has a default. */
export type PatternRateInput = { type: 'pattern_rate' } & Partial<Omit<PatternRateCondition, 'type'>>;

/** The condition with its defaults filled in (as stored and shown). */
export const patternRateCondition = (c: PatternRateInput): PatternRateCondition => ({
  type: 'pattern_rate',
  window_seconds: c.window_seconds ?? 300,
  baseline: c.baseline ?? 'previous',
  direction: c.direction ?? 'both',
  min_ratio: c.min_ratio ?? 3,
  min_count: c.min_count ?? 20,
  steady_windows: c.steady_windows ?? 3,
});

/** Firings notified per trigger and window at most (the highest scores); the rest are counted. */
export const MAX_FIRINGS_PER_WINDOW = 20;
/** Windows a late judge catches up on; older ones are skipped (a stalled process). */
const MAX_CATCH_UP = 10;
const WEEK_MS = 604_800_000;
const DAY_MS = 86_400_000;

export interface Span {
  fromMs: number;
  toMs: number;
}

/** How a trigger's windows are counted: by the trigger's filter within its reader's scope. */
export interface WindowReads {
  /** Names what it counts (filter and scope): triggers with equal keys share their counts. */
  key: string;
  /** Events per `pattern_id` with `ts` in the span. */
  count(span: Span): Promise<Map<string, number>>;
  /** Up to 10 of a pattern's events in the span, newest last. */
  samples(patternId: string, span: Span): Promise<Sample[]>;
}

export interface PatternRateTrigger {
  trigger: AlertTrigger;
  condition: PatternRateCondition;
  reads: WindowReads;
  /** Changes when what it counts changes (condition, query, filter, scope): it then starts afresh. */
  version: string;
}

export interface PatternRateOptions {
  now: () => number;
  /** How long after a window ends it is judged (ms): events arriving late still count. */
  settleMs: number;
  /** Whether this node judges and sends (cluster: the alert-notifier lease holder). */
  sends: () => boolean;
  templates: (ids: readonly string[]) => Promise<Map<string, string>>;
  linkBase: () => string;
  onFiring: (firing: Firing) => void;
  /** Where a judge that failed is told. */
  onError: (triggerId: number, err: unknown) => void;
}

interface Fired {
  change: PatternChange;
  b: number;
  baselineWindow: Span;
  /** Whether its firing was notified (a recovery is told only then). */
  notified: boolean;
}

interface Watch extends PatternRateTrigger {
  /** The next window to judge (its index k: [k·W, (k+1)·W)). */
  next: number;
  firing: Map<string, Fired>;
  /** Counts of windows already read, by index (the few `previous` and `gone` look back on). */
  counts: Map<number, Map<string, number>>;
  /** rolling_24h: the sums of the DAY_WINDOWS windows before window `upTo`, kept as windows pass. */
  rolling?: { upTo: number; sums: Map<string, number> };
  busy: boolean;
}

/**
 * The store reads one trigger costs per hour (ADR 0034): its window's count, and for a
 * baseline other than `previous` (whose count is the window before, already read) one more
 * window-wide read (a week back; the window leaving the rolling day). What a per-user budget
 * (`patternRateReadsPerHour`) is checked against; triggers that share counts cost less.
 */
export const patternRateReadsPerHour = (c: PatternRateCondition): number =>
  Math.ceil(3600 / c.window_seconds) * (c.baseline === 'previous' ? 1 : 2);

/** The windows of a rolling day: the baseline sums over this many (the 24 h, to the window). */
const dayWindows = (c: PatternRateCondition) => Math.max(1, Math.round(DAY_MS / (c.window_seconds * 1000)));

interface Transition {
  kind: 'fire' | 'recover';
  patternId: string;
  change: PatternChange;
  count: number;
  b: number;
  baselineWindow: Span;
  score: number;
}

/** Whether a fired change still holds for a window's count `c` against its firing's `b`. */
export function changeHolds(
  change: PatternChange,
  c: number,
  b: number,
  cond: PatternRateCondition,
): boolean {
  switch (change) {
    case 'up':
    case 'new':
      return c >= cond.min_count && (b === 0 || c >= cond.min_ratio * b);
    case 'down':
      return b >= cond.min_count && c <= b / cond.min_ratio;
    case 'gone':
      return c === 0;
    default:
      return change satisfies never;
  }
}

/**
 * Judges the windows of the enabled pattern_rate triggers on a clock (`tick`). State per
 * trigger and pattern lives in this process: a pattern fires when a rule starts to hold,
 * not again while it holds, and recovers (told at once when its firing was) in the first
 * window in which it no longer holds.
 */
export class PatternRateJudge {
  private watched = new Map<number, Watch>();
  private readonly lastNotified = new Map<string, number>();
  /** Judges under way (stop waits for them). */
  private readonly running = new Set<Promise<void>>();
  /** Firings beyond MAX_FIRINGS_PER_WINDOW in one trigger's window. */
  suppressed = 0;
  /** Firings held back by their trigger and pattern's cooldown. */
  cooledDown = 0;
  judged = 0;
  /** Counts read from the event store, and the milliseconds of time they covered. */
  storeReads = 0;
  storeReadMs = 0;
  /** Counts of one tick, by reads key and span: triggers counting the same share one read. */
  private shared = new Map<string, Promise<Map<string, number>>>();

  constructor(private readonly opts: PatternRateOptions) {}

  /** The enabled pattern_rate triggers; the state of one whose version is unchanged carries over. */
  setTriggers(triggers: readonly PatternRateTrigger[]): void {
    const next = new Map<number, Watch>();
    const at = this.opts.now();
    for (const t of triggers) {
      const old = this.watched.get(t.trigger.id);
      if (old && old.version === t.version) {
        // Its name, channels and cooldown may have changed: they apply from now on.
        Object.assign(old, { trigger: t.trigger, reads: t.reads });
        next.set(t.trigger.id, old);
        continue;
      }
      // The first window judged is the one during which it was made, enabled or changed.
      const w = t.condition.window_seconds * 1000;
      next.set(t.trigger.id, {
        ...t,
        next: Math.floor(at / w),
        firing: new Map(),
        counts: new Map(),
        busy: false,
      });
    }
    for (const key of this.lastNotified.keys())
      if (!next.has(Number(key.slice(0, key.indexOf('|'))))) this.lastNotified.delete(key);
    this.watched = next;
  }

  get size(): number {
    return this.watched.size;
  }

  /** Judges every window whose settle time has passed (each once). Resolves when those judged now are done. */
  async tick(): Promise<void> {
    const at = this.opts.now();
    const runs: Promise<void>[] = [];
    for (const w of this.watched.values()) {
      if (w.busy) continue;
      const width = w.condition.window_seconds * 1000;
      const due = Math.floor((at - this.opts.settleMs) / width) - 1;
      if (due < w.next) continue;
      if (!this.opts.sends()) {
        // Another node judges: this one keeps no state, and takes over from the present.
        Object.assign(w, { next: due + 1, firing: new Map(), counts: new Map(), rolling: undefined });
        continue;
      }
      if (due - w.next >= MAX_CATCH_UP) w.next = due - MAX_CATCH_UP + 1;
      w.busy = true;
      const run = this.catchUp(w, due)
        .catch((err: unknown) => this.opts.onError(w.trigger.id, err))
        .finally(() => {
          w.busy = false;
          this.running.delete(run);
        });
      this.running.add(run);
      runs.push(run);
    }
    await Promise.all(runs);
    this.shared = new Map();
  }

  /** A span's counts of what `w` counts: read once per tick whichever triggers ask. */
  private read(w: Watch, span: Span): Promise<Map<string, number>> {
    const key = `${w.reads.key}|${span.fromMs}|${span.toMs}`;
    let found = this.shared.get(key);
    if (!found) {
      this.storeReads++;
      this.storeReadMs += span.toMs - span.fromMs;
      found = w.reads.count(span);
      this.shared.set(key, found);
      found.catch(() => this.shared.get(key) === found && this.shared.delete(key));
    }
    return found;
  }

  /** Resolves once the judges under way are done (shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.running]);
  }

  private async catchUp(w: Watch, due: number): Promise<void> {
    while (w.next <= due && this.watched.get(w.trigger.id) === w) {
      const k = w.next;
      const transitions = await this.judge(w, k);
      // Replaced while counting: what it found is for a trigger that is no more.
      if (this.watched.get(w.trigger.id) !== w) return;
      w.next = k + 1;
      this.judged++;
      await this.notify(w, k, transitions);
      for (const old of w.counts.keys()) if (old < k - w.condition.steady_windows) w.counts.delete(old);
    }
  }

  private span(w: Watch, k: number): Span {
    const width = w.condition.window_seconds * 1000;
    return { fromMs: k * width, toMs: (k + 1) * width };
  }

  private async countOf(w: Watch, k: number): Promise<Map<string, number>> {
    let counts = w.counts.get(k);
    if (!counts) {
      counts = await this.read(w, this.span(w, k));
      w.counts.set(k, counts);
    }
    return counts;
  }

  /** The baseline counts of window `k` (not firing patterns) and the span they were counted over. */
  private async baseline(w: Watch, k: number): Promise<{ counts: Map<string, number>; span: Span }> {
    const here = this.span(w, k);
    switch (w.condition.baseline) {
      case 'previous':
        // A pattern not firing now was not firing in the window before either: it is its latest calm one.
        return { counts: await this.countOf(w, k - 1), span: this.span(w, k - 1) };
      case 'same_time_last_week': {
        const span = { fromMs: here.fromMs - WEEK_MS, toMs: here.toMs - WEEK_MS };
        return { counts: await this.read(w, span), span };
      }
      case 'rolling_24h': {
        const n = dayWindows(w.condition);
        const span = { fromMs: here.fromMs - n * (here.toMs - here.fromMs), toMs: here.fromMs };
        const day = await this.rollingDay(w, k, n, span);
        return { counts: new Map([...day].map(([id, c]) => [id, c / n])), span };
      }
      default:
        return w.condition.baseline satisfies never;
    }
  }

  /**
   * The sums of the `n` windows before window `k`: read whole once, then kept as windows pass
   * (the window before added, from the counts the judge has; the one leaving the day taken
   * away, a read one window wide), so each window costs the same whatever the day holds.
   */
  private async rollingDay(w: Watch, k: number, n: number, span: Span): Promise<Map<string, number>> {
    const kept = w.rolling;
    if (kept?.upTo === k) return kept.sums;
    if (kept?.upTo === k - 1) {
      const [entering, leaving] = await Promise.all([
        this.countOf(w, k - 1),
        this.read(w, this.span(w, k - 1 - n)),
      ]);
      const sums = new Map(kept.sums);
      for (const [id, c] of entering) sums.set(id, (sums.get(id) ?? 0) + c);
      for (const [id, c] of leaving) {
        const left = (sums.get(id) ?? 0) - c;
        if (left > 0) sums.set(id, left);
        else sums.delete(id);
      }
      w.rolling = { upTo: k, sums };
      return sums;
    }
    const sums = new Map(await this.read(w, span));
    w.rolling = { upTo: k, sums };
    return sums;
  }

  /** The patterns that fire or recover in window `k`, and the new state. */
  private async judge(w: Watch, k: number): Promise<Transition[]> {
    const cond = w.condition;
    const seconds = cond.window_seconds;
    const up = cond.direction !== 'down';
    const down = cond.direction !== 'up';
    const counts = await this.countOf(w, k);
    const before = await this.countOf(w, k - 1);
    const base = await this.baseline(w, k);
    const out: Transition[] = [];
    const ids = new Set([...counts.keys(), ...base.counts.keys(), ...w.firing.keys()]);
    // Gone: none now, at least min_count in each of the steady windows just before.
    let gone: string[] = [];
    if (down) {
      gone = [...before]
        .filter(([id, n]) => n >= cond.min_count && !counts.has(id) && !w.firing.has(id))
        .map(([id]) => id);
      for (let j = 2; j <= cond.steady_windows && gone.length; j++) {
        const earlier = await this.countOf(w, k - j);
        gone = gone.filter((id) => (earlier.get(id) ?? 0) >= cond.min_count);
      }
    }
    const goneSet = new Set(gone);
    for (const id of ids) {
      const c = counts.get(id) ?? 0;
      const fired = w.firing.get(id);
      if (fired) {
        if (changeHolds(fired.change, c, fired.b, cond)) continue;
        w.firing.delete(id);
        if (fired.notified) out.push({ kind: 'recover', patternId: id, count: c, ...fired, score: 0 });
        continue;
      }
      const b = base.counts.get(id) ?? 0;
      const change: PatternChange | null =
        up && changeHolds('up', c, b, cond)
          ? b === 0
            ? 'new'
            : 'up'
          : down && changeHolds('down', c, b, cond)
            ? 'down'
            : null;
      if (change && !goneSet.has(id))
        out.push({
          kind: 'fire',
          patternId: id,
          change,
          count: c,
          b,
          baselineWindow: base.span,
          score: changeScore(c, b, seconds, seconds),
        });
    }
    for (const id of gone) {
      const b = before.get(id) ?? 0;
      out.push({
        kind: 'fire',
        patternId: id,
        change: 'gone',
        count: 0,
        b,
        baselineWindow: this.span(w, k - 1),
        score: changeScore(0, b, seconds, seconds),
      });
    }
    // Fire: every one that starts holding is firing; the highest scores are told, the rest counted.
    const fires = out
      .filter((t) => t.kind === 'fire')
      .sort((x, y) => y.score - x.score || (x.patternId < y.patternId ? -1 : 1));
    let told = 0;
    const at = this.opts.now();
    const notified = new Set<Transition>();
    for (const t of fires) {
      let tell = false;
      if (told >= MAX_FIRINGS_PER_WINDOW) this.suppressed++;
      else if (!this.coolsDown(w, t.patternId, at)) this.cooledDown++;
      else {
        tell = true;
        told++;
        notified.add(t);
      }
      w.firing.set(t.patternId, {
        change: t.change,
        b: t.b,
        baselineWindow: t.baselineWindow,
        notified: tell,
      });
    }
    // Recoveries first, then the firings told, highest score first.
    return [...out.filter((t) => t.kind === 'recover'), ...fires.filter((t) => notified.has(t))];
  }

  /** Whether the trigger and pattern may notify a firing now; if so, its cooldown starts. */
  private coolsDown(w: Watch, patternId: string, at: number): boolean {
    const key = `${w.trigger.id}|${patternId}`;
    const last = this.lastNotified.get(key);
    if (last !== undefined && at - last < w.trigger.cooldown_seconds * 1000) return false;
    this.lastNotified.set(key, at);
    return true;
  }

  private async notify(w: Watch, k: number, transitions: readonly Transition[]): Promise<void> {
    if (!transitions.length) return;
    const templates = await this.opts.templates(transitions.map((t) => t.patternId));
    const window = this.span(w, k);
    const t0 = w.trigger;
    for (const t of transitions) {
      // Gone: the events are the baseline's.
      const where = t.change === 'gone' && t.kind === 'fire' ? t.baselineWindow : window;
      const samples = await w.reads.samples(t.patternId, where);
      const notification: Notification = {
        kind: t.kind,
        trigger: { id: t0.id, name: t0.name, severity: t0.severity, description: t0.description },
        condition: w.condition,
        group: { pattern_id: t.patternId },
        pattern: { pattern_id: t.patternId, template: templates.get(t.patternId) ?? '' },
        change: t.change,
        count: t.count,
        baseline_count: round3(t.b),
        ratio: t.b === 0 ? null : round3(t.count / t.b),
        window_seconds: w.condition.window_seconds,
        window: seconds(window),
        baseline_window: seconds(t.baselineWindow),
        fired_at: new Date(this.opts.now()).toISOString(),
        samples,
        search_url: searchUrl(this.opts.linkBase(), t0.query, t.patternId, where),
      };
      this.opts.onFiring({ trigger: t0, notification, evIds: samples.map((s) => s.ev_id) });
    }
  }
}

const seconds = (s: Span) => ({ ts_from: s.fromMs / 1000, ts_to: s.toMs / 1000 });

/** The web UI's Search on the trigger's query AND the pattern over the window. */
function searchUrl(base: string, query: string, patternId: string, span: Span): string {
  const q = `${query ? `(${query}) AND ` : ''}pattern_id:${patternId}`;
  const params = new URLSearchParams({ q, from: String(span.fromMs / 1000), to: String(span.toMs / 1000) });
  return `${base}/search?${params}`;
}
