/**
 * Threshold conditions over sliding windows, counted incrementally as events arrive.
 *
 * An event counts in the second it was committed (its arrival, not its `ts`: a late or
 * back-dated event still counts now, and silence is measured on the clock). At time `now`
 * the window holds the events of the seconds `s` with `now_s - window < s <= now_s`. A
 * group fires when its condition starts to hold and not again until it has stopped
 * holding (recovery): no flapping storm. `lt`/`lte` conditions also fire on silence, but
 * only for a group watched for a whole window (since the trigger started, or since the
 * group's first event), so a new trigger or a restart does not announce silence it did
 * not see. In a cluster each node also counts the others' events (`addCount`, per second,
 * as they arrive) and evaluates a little behind the clock, so the last second is whole.
 */

export type ThresholdOp = 'gt' | 'gte' | 'lt' | 'lte';

export interface ThresholdCondition {
  type: 'threshold';
  window_seconds: number;
  op: ThresholdOp;
  value: number;
  group_by: string[];
}

export interface Sample {
  ev_id: string;
  ts: number;
  message: string | null;
}

export interface Transition {
  kind: 'fire' | 'recover';
  /** The group's key (JSON of its values; "[]" without group_by). */
  group: string;
  count: number;
  /** The newest events of the group (up to SAMPLES), newest last. */
  samples: Sample[];
}

/** Samples kept per group for the notification. */
export const SAMPLES = 10;
/**
 * Groups one trigger keeps windows for; events of further groups are not counted (and
 * `logscope_alert_groups_refused_total` says how many were turned away). With SAMPLES
 * samples of at most 1,000 characters, a trigger holds at most about 20 MB.
 */
export const MAX_GROUPS = 1000;

interface Group {
  /** [second, count] of the seconds with events, oldest first. */
  buckets: Array<[number, number]>;
  count: number;
  firing: boolean;
  /** When this group started to be watched (ms): silence counts from then. */
  since: number;
  samples: Sample[];
}

export const holds = (op: ThresholdOp, count: number, value: number): boolean =>
  op === 'gt' ? count > value : op === 'gte' ? count >= value : op === 'lt' ? count < value : count <= value;

export class ThresholdWindows {
  private readonly groups = new Map<string, Group>();
  private readonly silence: boolean;
  /** Groups not tracked because the trigger has too many. */
  refusedGroups = 0;
  /** The newest second evaluated: older seconds out of the window are gone. */
  private evaluatedTo: number | null = null;

  constructor(
    readonly condition: ThresholdCondition,
    startedAt: number,
    private readonly maxGroups = MAX_GROUPS,
  ) {
    this.silence = condition.op === 'lt' || condition.op === 'lte';
    // Without group_by there is one group, watched from the start (silence included).
    if (condition.group_by.length === 0) this.groups.set('[]', this.newGroup(startedAt));
  }

  get size(): number {
    return this.groups.size;
  }

  private newGroup(since: number): Group {
    return { buckets: [], count: 0, firing: false, since, samples: [] };
  }

  /** Counts one event of `group` committed at `atMs`. */
  add(group: string, atMs: number, sample?: Sample): void {
    this.addCount(group, atMs, 1, sample ? [sample] : []);
  }

  /**
   * Counts `n` events of `group` committed in the second of `atMs` (another node's count,
   * which may arrive after later seconds' events: its bucket goes in its place). A count
   * for a second already out of the window is ignored.
   */
  addCount(group: string, atMs: number, n: number, samples: readonly Sample[] = []): void {
    const s = Math.floor(atMs / 1000);
    if (this.evaluatedTo !== null && s <= this.evaluatedTo - this.condition.window_seconds) return;
    let g = this.groups.get(group);
    if (!g) {
      if (this.groups.size >= this.maxGroups) {
        this.refusedGroups++;
        return;
      }
      // Watched from the start of its first second: the same on every node of a cluster,
      // whether it counted the event itself or heard of it.
      g = this.newGroup(s * 1000);
      this.groups.set(group, g);
      // An earlier second heard late (the one group of a trigger without group_by is
      // watched from the trigger's start instead).
    } else if (s * 1000 < g.since && group !== '[]') g.since = s * 1000;
    let i = g.buckets.length;
    while (i > 0 && (g.buckets[i - 1] as [number, number])[0] > s) i--;
    const before = g.buckets[i - 1];
    if (before && before[0] === s) before[1] += n;
    else g.buckets.splice(i, 0, [s, n]);
    g.count += n;
    for (const sample of samples) g.samples.push(sample);
    if (g.samples.length > SAMPLES) g.samples.splice(0, g.samples.length - SAMPLES);
  }

  /** Slides every window to `nowMs` and returns the groups that fired or recovered. */
  evaluate(nowMs: number): Transition[] {
    const out: Transition[] = [];
    const nowS = Math.floor(nowMs / 1000);
    this.evaluatedTo = Math.max(this.evaluatedTo ?? nowS, nowS);
    const oldest = nowS - this.condition.window_seconds; // excluded
    const { op, value, window_seconds } = this.condition;
    for (const [key, g] of this.groups) {
      // A group first seen after `nowMs` (evaluating behind the clock) is not there yet.
      if (g.since > nowMs && key !== '[]') continue;
      let drop = 0;
      while (drop < g.buckets.length && (g.buckets[drop] as [number, number])[0] <= oldest) {
        g.count -= (g.buckets[drop] as [number, number])[1];
        drop++;
      }
      if (drop > 0) g.buckets.splice(0, drop);
      // Seconds after `nowMs` (counted when the evaluation lags the clock) wait their turn.
      let count = g.count;
      for (let i = g.buckets.length - 1; i >= 0 && (g.buckets[i] as [number, number])[0] > nowS; i--)
        count -= (g.buckets[i] as [number, number])[1];
      const watchedLongEnough = !this.silence || nowMs - g.since >= window_seconds * 1000;
      const now = watchedLongEnough && holds(op, count, value);
      if (now && !g.firing) {
        g.firing = true;
        out.push({ kind: 'fire', group: key, count, samples: [...g.samples] });
      } else if (!now && g.firing) {
        g.firing = false;
        out.push({ kind: 'recover', group: key, count, samples: [...g.samples] });
      }
      // A grouped group with nothing left to say is forgotten (silence keeps its groups).
      if (!this.silence && key !== '[]' && g.count === 0 && !g.firing) this.groups.delete(key);
    }
    return out;
  }
}
