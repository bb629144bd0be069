const HOUR_MS = 3_600_000;

/**
 * Events per hour of `ts` (hour start ms → count), kept current by appends: sizes query
 * slices and stream windows at no cost (`estimateInRange`).
 */
export class HourHistogram {
  private readonly perHour = new Map<number, number>();

  add(events: ReadonlyArray<{ ts: number }>): void {
    for (const e of events) {
      const hour = e.ts - (e.ts % HOUR_MS);
      this.perHour.set(hour, (this.perHour.get(hour) ?? 0) + 1);
    }
  }

  /**
   * `count` events somewhere in [fromMs, toMs] (another node's commit: only its size and
   * time bounds are known), spread over the hours by the time each covers.
   */
  addSpread(count: number, fromMs: number, toMs: number): void {
    if (!(count > 0) || !Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs < fromMs) return;
    const first = fromMs - (fromMs % HOUR_MS);
    const span = toMs - fromMs + 1;
    // A span of months (a backfill) is not worth an entry per hour: it counts at its end.
    if (span > 1000 * HOUR_MS) {
      const hour = toMs - (toMs % HOUR_MS);
      this.perHour.set(hour, (this.perHour.get(hour) ?? 0) + count);
      return;
    }
    for (let hour = first; hour <= toMs; hour += HOUR_MS) {
      const covered = Math.min(toMs + 1, hour + HOUR_MS) - Math.max(fromMs, hour);
      this.perHour.set(hour, (this.perHour.get(hour) ?? 0) + (count * covered) / span);
    }
  }

  /** Replaces every count (after a delete, or at open). */
  reset(counts: Iterable<readonly [number, number]>): void {
    this.perHour.clear();
    for (const [hour, n] of counts) this.perHour.set(hour, n);
  }

  entries(): Array<[number, number]> {
    return [...this.perHour];
  }

  /**
   * Time ranges covering all time, in order, each of whole hours holding about `maxEvents`
   * or fewer (an hour holding more is a range of its own).
   */
  parts(maxEvents: number): Array<{ fromMs: number; toMs: number }> {
    const hours = [...this.perHour].sort((a, b) => a[0] - b[0]);
    const parts: Array<{ fromMs: number; toMs: number }> = [];
    let from = Number.NEGATIVE_INFINITY;
    let n = 0;
    for (const [hour, count] of hours) {
      if (n > 0 && n + count > maxEvents) {
        parts.push({ fromMs: from, toMs: hour });
        from = hour;
        n = 0;
      }
      n += count;
    }
    parts.push({ fromMs: from, toMs: Number.POSITIVE_INFINITY });
    return parts;
  }

  /** About how many events lie in [fromMs, toMs), assuming each hour's are spread evenly. */
  estimate(fromMs: number, toMs: number): number {
    let n = 0;
    for (const [hour, count] of this.perHour) {
      const lo = Math.max(fromMs, hour);
      const hi = Math.min(toMs, hour + HOUR_MS);
      if (hi > lo) n += (count * (hi - lo)) / HOUR_MS;
    }
    return Math.round(n);
  }
}
