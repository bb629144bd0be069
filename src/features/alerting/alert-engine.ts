import type { ClusterTopics } from '../../core/bus.js';
import type { NormalisedEvent } from '../../core/event.js';
import { counter, gauge, type MetricDecl } from '../../core/metrics.js';
import { fieldValue } from '../../filter/evaluate.js';
import type { Condition, NewPatternCondition } from './conditions.js';
import type { Notification } from './notification.js';
import { SAMPLES, type Sample, type ThresholdCondition, ThresholdWindows } from './threshold.js';

/** What the engine needs of a trigger. */
export interface AlertTrigger {
  id: number;
  name: string;
  severity: string;
  description: string;
  query: string;
  condition: Condition;
  notify: number[];
  cooldown_seconds: number;
  create_task: boolean;
  /** Changes when the trigger does: windows of an unchanged trigger are kept across reloads. */
  version: string;
  /** When it was created (ms): a new_pattern trigger's warm-up starts then. */
  createdAtMs: number;
}

/** A firing: sent to the trigger's channels (and, with create_task, a task). */
export interface Firing {
  trigger: AlertTrigger;
  notification: Notification;
  /** The ids of the samples, for a task. */
  evIds: string[];
}

/** One node's matches of one short stretch (cluster mode), for the other nodes to count. */
export type AlertCounts = ClusterTopics['alert-counts'];

export interface AlertEngineOptions {
  now?: () => number;
  /**
   * Cluster mode: matches are published (`AlertCounts`) for the other nodes, whose counts
   * come in through `receive`; windows are evaluated `lagMs` behind the clock so the
   * others' counts of a second are in before it is judged.
   */
  share?: { publish: (counts: AlertCounts) => void; lagMs: number };
  /**
   * Whether this node sends what it evaluates (cluster: the holder of the notifier lease;
   * the others keep the same state and stay silent, ready to take over). Default: always.
   */
  sends?: () => boolean;
  /** The web UI's address (for the Search link); read at each firing. */
  linkBase: () => string;
  /** Hears every firing not held back by a cooldown. */
  onFiring: (firing: Firing) => void;
  /** Patterns (new_pattern conditions): when a pattern's first event happened (ms), and its template. */
  patterns?: { firstSeen(id: string): number | undefined; template(id: string): string | undefined };
}

interface Watched {
  trigger: AlertTrigger;
  windows: ThresholdWindows | null;
  /** Match conditions: events since the last notification, and the latest of them. */
  pending: number;
  samples: Sample[];
  /** new_pattern: the patterns it fired for (once each). */
  fired?: Set<string>;
}

/**
 * A sample as kept for a notification: its message cut to SAMPLE_MESSAGE_CHARS (a message
 * may be 64 KB, kept ten times for each of up to MAX_GROUPS groups of each trigger).
 */
const sampleOf = (e: NormalisedEvent): Sample => ({
  ev_id: e.ev_id,
  ts: e.ts / 1000,
  message:
    e.message !== null && e.message.length > SAMPLE_MESSAGE_CHARS
      ? `${e.message.slice(0, SAMPLE_MESSAGE_CHARS)}…`
      : e.message,
});

/** Characters of a sample's message kept. */
export const SAMPLE_MESSAGE_CHARS = 1000;

/**
 * Evaluates the conditions of the enabled triggers that have one worth evaluating (a
 * threshold, or channels to notify), incrementally: the trigger index's matches are
 * counted into per-second windows as events commit, and the windows slide on a clock tick,
 * so silence is seen without a query. Cooldowns hold back a trigger and group's next
 * notification for `cooldown_seconds`.
 */
export class AlertEngine {
  private watched = new Map<number, Watched>();
  private readonly lastNotified = new Map<string, number>();
  /** Trigger and group keys whose firing was notified: their recovery is told too. */
  private readonly notifiedFiring = new Set<string>();
  private readonly now: () => number;
  /** Cluster mode: this node's matches not yet published, by second, trigger and group. */
  private outbox = new Map<
    string,
    { s: number; trigger: number; version: string; groups: Map<string, [number, Sample[]]> }
  >();
  private readonly lagMs: number;
  /** Firings held back by a cooldown. */
  suppressed = 0;
  fired = 0;
  recovered = 0;

  constructor(private readonly opts: AlertEngineOptions) {
    this.now = opts.now ?? Date.now;
    this.lagMs = opts.share?.lagMs ?? 0;
  }

  /** The enabled triggers; windows of unchanged ones carry over. */
  setTriggers(triggers: readonly AlertTrigger[]): void {
    const next = new Map<number, Watched>();
    const at = this.now();
    for (const t of triggers) {
      if (t.condition.type !== 'threshold' && t.notify.length === 0) continue;
      const old = this.watched.get(t.id);
      if (old && old.trigger.version === t.version) {
        next.set(t.id, old);
        continue;
      }
      next.set(t.id, {
        trigger: t,
        windows: t.condition.type === 'threshold' ? new ThresholdWindows(t.condition, at) : null,
        pending: 0,
        samples: [],
        ...(t.condition.type === 'new_pattern' ? { fired: new Set<string>() } : {}),
      });
    }
    const previous = this.watched;
    this.watched = next;
    const idOf = (key: string) => Number(key.slice(0, key.indexOf('|')));
    for (const key of this.lastNotified.keys()) if (!next.has(idOf(key))) this.lastNotified.delete(key);
    // A changed trigger starts with new windows: nothing of it is firing any more.
    for (const key of this.notifiedFiring) {
      const id = idOf(key);
      if (next.get(id) !== previous.get(id)) this.notifiedFiring.delete(key);
    }
  }

  /** Whether the trigger's matches are the engine's to count (and not only recorded). */
  watches(triggerId: number): boolean {
    return this.watched.has(triggerId);
  }

  isThreshold(triggerId: number): boolean {
    return this.watched.get(triggerId)?.windows != null;
  }

  /** Matches of one committed batch: trigger id → its events. Evaluates what changed. */
  observe(hits: ReadonlyMap<number, readonly NormalisedEvent[]>): void {
    const at = this.now();
    for (const [id, events] of hits) {
      const w = this.watched.get(id);
      if (!w) continue;
      if (w.trigger.condition.type === 'new_pattern') {
        this.newPatterns(w, w.trigger.condition, events, at);
        continue;
      }
      if (this.opts.share) this.toOutbox(w, events, at);
      if (w.windows) {
        const groupBy = (w.trigger.condition as ThresholdCondition).group_by;
        for (const e of events) w.windows.add(groupKey(groupBy, e), at, sampleOf(e));
        this.emit(w, w.windows.evaluate(at - this.lagMs), at);
      } else this.addMatches(w, events.length, events.slice(-SAMPLES).map(sampleOf), at);
    }
  }

  /** Another node's matches (cluster mode): counted as if they had been this node's. */
  receive(message: AlertCounts): void {
    const at = this.now();
    for (const c of message.counts) {
      const w = this.watched.get(c.trigger);
      if (!w || w.trigger.version !== c.version) continue;
      if (w.windows) {
        for (const [group, n, samples] of c.groups) w.windows.addCount(group, c.s * 1000, n, samples);
        this.emit(w, w.windows.evaluate(at - this.lagMs), at);
      } else for (const [, n, samples] of c.groups) this.addMatches(w, n, samples, at);
    }
  }

  /** Cluster mode: publishes this node's matches since the last call (none: nothing sent). */
  flush(): void {
    if (!this.opts.share || this.outbox.size === 0) return;
    const counts = [...this.outbox.values()].map((o) => ({
      s: o.s,
      trigger: o.trigger,
      version: o.version,
      groups: [...o.groups].map(([g, [n, samples]]) => [g, n, samples] as [string, number, Sample[]]),
    }));
    this.outbox = new Map();
    this.opts.share.publish({ counts });
  }

  /** The clock: windows slide (silence, recoveries), held-back matches go out after their cooldown. */
  tick(): void {
    const at = this.now();
    for (const w of this.watched.values()) {
      if (w.windows) this.emit(w, w.windows.evaluate(at - this.lagMs), at);
      else if (w.pending > 0) this.notifyMatches(w, at);
    }
  }

  /**
   * new_pattern: an event whose pattern's first event happened after the trigger's warm-up
   * fires, once per pattern, with the template; patterns of before stay quiet.
   */
  private newPatterns(
    w: Watched,
    c: NewPatternCondition,
    events: readonly NormalisedEvent[],
    at: number,
  ): void {
    const patterns = this.opts.patterns;
    if (!patterns) return;
    const warm = w.trigger.createdAtMs + c.warmup_seconds * 1000;
    for (const e of events) {
      const id = e.pattern_id;
      if (!id || w.fired?.has(id)) continue;
      const first = patterns.firstSeen(id);
      if (first === undefined || first < warm) continue;
      w.fired?.add(id);
      this.fire(w.trigger, {}, 1, [sampleOf(e)], at, 'fire', {
        pattern_id: id,
        template: patterns.template(id) ?? '',
      });
    }
  }

  private addMatches(w: Watched, n: number, samples: readonly Sample[], at: number): void {
    w.pending += n;
    for (const sample of samples) w.samples.push(sample);
    w.samples.splice(0, Math.max(0, w.samples.length - SAMPLES));
    this.notifyMatches(w, at);
  }

  private toOutbox(w: Watched, events: readonly NormalisedEvent[], at: number): void {
    const s = Math.floor(at / 1000);
    const key = `${s}|${w.trigger.id}`;
    let o = this.outbox.get(key);
    if (!o) {
      o = { s, trigger: w.trigger.id, version: w.trigger.version, groups: new Map() };
      this.outbox.set(key, o);
    }
    const groupBy = w.trigger.condition.type === 'threshold' ? w.trigger.condition.group_by : [];
    for (const e of events) {
      const g = groupKey(groupBy, e);
      let entry = o.groups.get(g);
      if (!entry) {
        entry = [0, []];
        o.groups.set(g, entry);
      }
      entry[0]++;
      entry[1].push(sampleOf(e));
      if (entry[1].length > SAMPLES) entry[1].shift();
    }
  }

  /** Whether this node sends what it evaluates (see `sends`). */
  sending(): boolean {
    return this.opts.sends?.() ?? true;
  }

  metrics(): MetricDecl[] {
    return [
      counter(
        'logscope_alert_firings_total',
        'Trigger conditions met and notified (threshold crossings, silences, match notifications).',
        () => this.fired,
      ),
      counter(
        'logscope_alert_suppressed_total',
        'Threshold firings held back by the trigger’s cooldown.',
        () => this.suppressed,
      ),
      gauge(
        'logscope_alert_notifier',
        'Whether this process sends the notifications (1; in a cluster, the holder of the alert-notifier lease).',
        () => (this.sending() ? 1 : 0),
      ),
      gauge(
        'logscope_alert_groups',
        'Groups whose sliding windows are kept in memory, over every threshold trigger.',
        () => this.stats().groups,
      ),
      counter(
        'logscope_alert_groups_refused_total',
        'Events of a new group not counted because their threshold trigger already keeps windows for 1,000 groups.',
        () => this.stats().refusedGroups,
      ),
    ];
  }

  stats() {
    let groups = 0;
    for (const w of this.watched.values()) groups += w.windows?.size ?? 0;
    let refusedGroups = 0;
    for (const w of this.watched.values()) refusedGroups += w.windows?.refusedGroups ?? 0;
    return {
      watched: this.watched.size,
      groups,
      refusedGroups,
      fired: this.fired,
      suppressed: this.suppressed,
    };
  }

  private notifyMatches(w: Watched, at: number): void {
    if (!this.cooledDown(w.trigger, '[]', at)) return;
    const samples = w.samples;
    const count = w.pending;
    w.pending = 0;
    w.samples = [];
    this.fire(w.trigger, {}, count, samples, at);
  }

  private emit(w: Watched, transitions: ReturnType<ThresholdWindows['evaluate']>, at: number): void {
    const groupBy = (w.trigger.condition as ThresholdCondition).group_by;
    const groupOf = (key: string) => {
      const values = JSON.parse(key) as unknown[];
      return Object.fromEntries(groupBy.map((f, i) => [f, values[i] ?? null]));
    };
    for (const t of transitions) {
      const key = `${w.trigger.id}|${t.group}`;
      if (t.kind === 'recover') {
        // Told only when its firing was; never held back (it ends an alert).
        if (this.notifiedFiring.delete(key))
          this.fire(w.trigger, groupOf(t.group), t.count, t.samples, at, 'recover');
        continue;
      }
      if (!this.cooledDown(w.trigger, t.group, at)) {
        if (this.sending()) this.suppressed++;
        continue;
      }
      this.notifiedFiring.add(key);
      this.fire(w.trigger, groupOf(t.group), t.count, t.samples, at);
    }
  }

  /** Whether the trigger and group may notify now; if so, the cooldown starts. */
  private cooledDown(t: AlertTrigger, group: string, at: number): boolean {
    const key = `${t.id}|${group}`;
    const last = this.lastNotified.get(key);
    if (last !== undefined && at - last < t.cooldown_seconds * 1000) return false;
    this.lastNotified.set(key, at);
    return true;
  }

  private fire(
    t: AlertTrigger,
    group: Record<string, unknown>,
    count: number,
    samples: Sample[],
    at: number,
    kind: 'fire' | 'recover' = 'fire',
    pattern?: { pattern_id: string; template: string },
  ) {
    // A node that does not send (cluster, not the notifier) keeps the same state, silently.
    if (!this.sending()) return;
    if (kind === 'fire') this.fired++;
    else this.recovered++;
    const window = t.condition.type === 'threshold' ? t.condition.window_seconds : null;
    this.opts.onFiring({
      trigger: t,
      evIds: samples.map((s) => s.ev_id),
      notification: {
        kind,
        trigger: { id: t.id, name: t.name, severity: t.severity, description: t.description },
        condition: t.condition,
        group,
        count,
        window_seconds: window,
        fired_at: new Date(at).toISOString(),
        samples,
        search_url: searchUrl(
          this.opts.linkBase(),
          pattern ? `${t.query ? `(${t.query}) ` : ''}pattern_id:${pattern.pattern_id}` : t.query,
          group,
          at,
          window,
        ),
        ...(pattern ? { pattern } : {}),
      },
    });
  }
}

/** The group of an event: the JSON of its group_by values (null when absent). */
export function groupKey(groupBy: readonly string[], e: NormalisedEvent): string {
  if (groupBy.length === 0) return '[]';
  return JSON.stringify(groupBy.map((f) => fieldValue(e, f) ?? null));
}

/** The Search of the matching events around the firing (the window, or the last hour). */
function searchUrl(
  base: string,
  query: string,
  group: Record<string, unknown>,
  at: number,
  windowSeconds: number | null,
): string {
  const terms = Object.entries(group).map(([k, v]) =>
    v === null ? `NOT _exists_:${k}` : `${k}:"${String(v).replace(/["\\]/g, '\\$&')}"`,
  );
  const q = [query ? (terms.length ? `(${query})` : query) : '', ...terms].filter(Boolean).join(' AND ');
  const to = Math.ceil(at / 1000) + 60;
  const from = to - 60 - Math.max(windowSeconds ?? 3600, 60);
  return `${base}/search?${new URLSearchParams({ q, from: String(from), to: String(to) })}`;
}
