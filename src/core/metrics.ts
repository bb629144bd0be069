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
  type: 'counter' | 'gauge';
  /** With a label, `read` gives a value per label value; without, one number. */
  label?: string;
  read: () => number | Readonly<Record<string, number>> | Promise<number | Readonly<Record<string, number>>>;
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

/** How long store figures (event count, bytes, oldest event, reports) are reused between scrapes. */
export const STORE_STATS_MS = 10_000;
