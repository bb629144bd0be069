import v8 from 'node:v8';
import vm from 'node:vm';
import type { StoredEvent } from '../core/event.js';
import type { QueryJob } from './job.js';

/** Results freed (removed, forgotten, dropped) this large or more: a full collection follows. */
const COLLECT_AFTER_BYTES = 32 * 1024 * 1024;
/** The collection waits this long after the last such release (a batch of removals is one). */
const COLLECT_DELAY_MS = 1000;

/**
 * The memory query results hold, against a budget: results are set through `hold`, and
 * over the budget the results of the least recently read finished jobs nobody watches
 * are dropped (`evicted`: recomputed on their next read).
 */
export class ResultsBudget {
  /** Estimated bytes held by the results of tracked jobs. */
  held = 0;
  /** Results dropped to stay within the budget, since start. */
  evictions = 0;

  /** Bytes of results freed since the last full collection, and the collection's timer. */
  private freed = 0;
  private collecting: NodeJS.Timeout | null = null;

  constructor(
    /** Undefined: no limit. */
    readonly budgetBytes: number | undefined,
    /** Runs a full garbage collection (`heapCollector`; null: none). */
    private readonly collect: (() => void) | null = heapCollector(),
  ) {}

  /**
   * Sets a job's results and, when it is `tracked`, accounts for them; over the budget,
   * evicts among `jobs` those finished, not running and not `watched` (never `job`).
   */
  hold(
    job: QueryJob,
    results: unknown,
    tracked: boolean,
    jobs: Iterable<QueryJob>,
    watched: (id: string) => boolean,
  ): void {
    if (tracked) this.held -= job.resultBytes;
    job.results = results;
    job.resultBytes = results === null ? 0 : estimateResultBytes(results);
    if (!tracked) return;
    this.held += job.resultBytes;
    const budget = this.budgetBytes;
    if (budget === undefined || this.held <= budget) return;
    const candidates = [...jobs]
      .filter(
        (j) =>
          j !== job &&
          j.results !== null &&
          !j.running &&
          (j.status === 'SUCCESS' || j.status === 'STOPPED') &&
          !watched(j.id),
      )
      .sort((a, b) => a.readAt - b.readAt);
    for (const j of candidates) {
      if (this.held <= budget) break;
      this.held -= j.resultBytes;
      this.freeing(j.resultBytes);
      j.results = null;
      j.resultBytes = 0;
      j.evicted = true;
      this.evictions++;
    }
  }

  /** A job's results leave memory with it. */
  release(job: QueryJob): void {
    this.held -= job.resultBytes;
    this.freeing(job.resultBytes);
  }

  /**
   * Results that leave for good are garbage V8 collects only under allocation pressure:
   * on an idle server, 46 removed Searches of 10,000 events each stayed in the heap (and
   * the process's memory) indefinitely. Once `COLLECT_AFTER_BYTES` are freed, a full
   * collection runs after the releases pause, and V8 gives the emptied pages back. Results
   * replaced by a re-evaluation are the steady churn V8's own collections handle.
   */
  private freeing(bytes: number): void {
    this.freed += bytes;
    if (!this.collect || this.freed < COLLECT_AFTER_BYTES) return;
    if (this.collecting) clearTimeout(this.collecting);
    this.collecting = setTimeout(() => {
      this.collecting = null;
      this.freed = 0;
      this.collect?.();
    }, COLLECT_DELAY_MS);
    this.collecting.unref();
  }
}

let collector: (() => void) | null | undefined;

/**
 * V8's full collection, made callable once: `--expose-gc` set at run time exposes `gc` to
 * contexts made after it (node's own flag would have to be on every command line that
 * starts a server, the CLI's and the tests' included). Null where V8 refuses.
 */
export function heapCollector(): (() => void) | null {
  if (collector === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      const gc: unknown = vm.runInNewContext('gc');
      collector = typeof gc === 'function' ? () => (gc as () => void)() : null;
    } catch {
      collector = null;
    }
  }
  return collector;
}

/**
 * About how many bytes of memory a result holds, cheaply: a Search's events by a
 * per-event estimate (object, its strings and extra fields); other results (small
 * aggregates) by the length of their JSON.
 */
export function estimateResultBytes(results: unknown): number {
  const events = (results as { events?: unknown }).events;
  if (Array.isArray(events)) {
    let n = 256;
    for (const e of events as StoredEvent[]) n += eventBytes(e);
    return n;
  }
  return 256 + 2 * (JSON.stringify(results)?.length ?? 0);
}

/** V8 object with ~22 slots plus its strings and fields map. */
function eventBytes(e: StoredEvent): number {
  let n = 360;
  for (const v of Object.values(e)) if (typeof v === 'string') n += stringBytes(v);
  for (const k in e.fields) {
    const v: unknown = e.fields[k];
    n += 60 + stringBytes(k) + (typeof v === 'string' ? stringBytes(v) : 16);
  }
  return n;
}

/**
 * A string's header and characters: one byte a character when all are ASCII, else two
 * (V8 keeps a string with any character past Latin-1 as UTF-16; counting one byte for
 * them undercounted a Search of non-Latin text by nearly half).
 */
function stringBytes(v: string): number {
  return 20 + (Buffer.byteLength(v) === v.length ? v.length : 2 * v.length);
}
