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
 * not see.
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

  constructor(
    readonly condition: ThresholdCondition,
    startedAt: number,
    private readonly maxGroups = 10_000,
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
    let g = this.groups.get(group);
    if (!g) {
      if (this.groups.size >= this.maxGroups) {
        this.refusedGroups++;
        return;
      }
      g = this.newGroup(atMs);
      this.groups.set(group, g);
    }
    const s = Math.floor(atMs / 1000);
    const last = g.buckets[g.buckets.length - 1];
    if (last && last[0] === s) last[1]++;
    else g.buckets.push([s, 1]);
    g.count++;
    if (sample) {
      g.samples.push(sample);
      if (g.samples.length > SAMPLES) g.samples.shift();
    }
  }

  /** Slides every window to `nowMs` and returns the groups that fired or recovered. */
  evaluate(nowMs: number): Transition[] {
    const out: Transition[] = [];
    const oldest = Math.floor(nowMs / 1000) - this.condition.window_seconds; // excluded
    const { op, value, window_seconds } = this.condition;
    for (const [key, g] of this.groups) {
      let drop = 0;
      while (drop < g.buckets.length && (g.buckets[drop] as [number, number])[0] <= oldest) {
        g.count -= (g.buckets[drop] as [number, number])[1];
        drop++;
      }
      if (drop > 0) g.buckets.splice(0, drop);
      const watchedLongEnough = !this.silence || nowMs - g.since >= window_seconds * 1000;
      const now = watchedLongEnough && holds(op, g.count, value);
      if (now && !g.firing) {
        g.firing = true;
        out.push({ kind: 'fire', group: key, count: g.count, samples: [...g.samples] });
      } else if (!now && g.firing) {
        g.firing = false;
        out.push({ kind: 'recover', group: key, count: g.count, samples: [...g.samples] });
      }
      // A grouped group with nothing left to say is forgotten (silence keeps its groups).
      if (!this.silence && key !== '[]' && g.count === 0 && !g.firing) this.groups.delete(key);
    }
    return out;
  }
}
