/**
 * What a component shows in /metrics, as plain data: each component declares its figures
 * beside the state they read, and only the metrics route knows Prometheus
 * (http/routes/metrics.ts).
 */
export interface MetricDecl {
  /** The full name, `logscope_…`. */
  name: string;
  help: string;
  /**
   * `counter`: `read` gives a running total kept by the component; the route adds what it
   * grew by at each scrape (a total below the last one seen started again from zero).
   * `gauge`: `read` gives the value now.
   */
  type: 'counter' | 'gauge' | 'histogram';
  /**
   * With a label, `read` gives a value per label value; without, one number. Several
   * labels are named `a,b` and their values keyed `x,y`.
   */
  label?: string;
  read: () => number | Readonly<Record<string, number>> | Promise<number | Readonly<Record<string, number>>>;
  /** `histogram`: its buckets' upper bounds. */
  buckets?: readonly number[];
  /** `histogram`: the values observed since the last call (each scrape takes them). */
  drain?: () => readonly number[];
}

/** A component with figures for /metrics. */
export interface MetricsSource {
  metrics(): readonly MetricDecl[];
}

/** A running total's growth since `seen` (all of it when it started again below `seen`). */
export const growth = (now: number, seen: number): number => (now >= seen ? now - seen : now);

/**
 * Caches an async read for `ms` (a failed read is not kept): store figures are asked at
 * most that often, whatever the scrape rate, since counting a large store is not free.
 */
export function cachedFor<T>(ms: number, read: () => Promise<T>): () => Promise<T> {
  let cached: { at: number; value: Promise<T> } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > ms) {
      const value = read();
      cached = { at: Date.now(), value };
      value.catch(() => {
        if (cached?.value === value) cached = undefined;
      });
    }
    return cached.value;
  };
}

/** A running total (see MetricDecl). */
export const counter = (
  name: string,
  help: string,
  read: MetricDecl['read'],
  label?: string,
): MetricDecl => ({
  name,
  help,
  type: 'counter',
  read,
  ...(label ? { label } : {}),
});

/** A value now (see MetricDecl). */
export const gauge = (name: string, help: string, read: MetricDecl['read'], label?: string): MetricDecl => ({
  name,
  help,
  type: 'gauge',
  read,
  ...(label ? { label } : {}),
});

/**
 * A distribution (`histogram`): the component keeps what it observed until a scrape
 * takes it (`drain`). `read` is unused.
 */
export const histogram = (
  name: string,
  help: string,
  buckets: readonly number[],
  drain: () => readonly number[],
): MetricDecl => ({ name, help, type: 'histogram', read: () => 0, buckets, drain });

/** Observations kept for a scrape, at most `max` (the oldest go first when nobody scrapes). */
export class Observations {
  private values: number[] = [];
  constructor(private readonly max = 10_000) {}
  observe(value: number): void {
    if (this.values.length >= this.max) this.values.shift();
    this.values.push(value);
  }
  drain(): number[] {
    const out = this.values;
    this.values = [];
    return out;
  }
}

/** How long store figures (event count, bytes, oldest event, reports) are reused between scrapes. */
export const STORE_STATS_MS = 10_000;
