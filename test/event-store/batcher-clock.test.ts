import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import type { NormalisedEvent } from '../../src/core/event.js';
import { AppError } from '../../src/errors/errors.js';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { Batcher, type BatcherOptions } from '../../src/ingest/batcher.js';
import { event, T0 } from '../helpers/seed.js';

/**
 * The batcher's group commit on a fake clock, over a real (in-memory DuckDB) store: when
 * waiting events are handed to the store (`append`), how many at once, what is refused,
 * and what `close` commits. Time only moves when the test moves it.
 */
const FAKE: Parameters<typeof vi.useFakeTimers>[0] = {
  toFake: ['Date', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'],
};

let seq = 0;
const events = (n: number): NormalisedEvent[] =>
  Array.from({ length: n }, () => event({ ts: T0 + seq++ * 1000, message: `m ${seq}` }));

describe('batcher on a fake clock', () => {
  let store: DuckDbEventStore;
  let append: MockInstance<DuckDbEventStore['append']>;
  let batcher: Batcher | null = null;
  const make = (opts: Partial<BatcherOptions> = {}) => {
    batcher = new Batcher(store, { intervalMs: 1000, maxBatchEvents: 100, maxQueuedEvents: 1000, ...opts });
    return batcher;
  };
  /** Events the store holds. */
  const stored = async () => (await store.stats()).events;
  /** Sizes of the batches handed to the store so far. */
  const batches = () => append.mock.calls.map((c) => c[0].length);

  beforeEach(async () => {
    store = await DuckDbEventStore.open({
      dataDir: ':memory:',
      memoryLimit: '256MB',
      checkpointThreshold: '16MB',
    });
    append = vi.spyOn(store, 'append');
    vi.useFakeTimers({ ...FAKE, now: T0 });
  });
  afterEach(async () => {
    await batcher?.close();
    batcher = null;
    vi.useRealTimers();
    await store.close();
  });

  it('commits a lone request on the next turn, then gathers what comes within intervalMs', async () => {
    const b = make();
    const first = b.submit(events(1));
    expect(batches()).toEqual([]); // not in the caller's own turn
    await vi.advanceTimersByTimeAsync(0);
    expect(batches()).toEqual([1]);
    await first;
    expect(await stored()).toBe(1);

    await vi.advanceTimersByTimeAsync(100);
    const second = b.submit(events(2));
    const third = b.submit(events(3));
    await vi.advanceTimersByTimeAsync(899); // 999 ms after the first commit
    expect(batches()).toEqual([1]);
    expect(b.queuedEvents).toBe(5);
    await vi.advanceTimersByTimeAsync(1); // intervalMs after it: one append of both
    expect(batches()).toEqual([1, 5]);
    const [a, c] = await Promise.all([second, third]);
    expect(a.storedAt).toBe(c.storedAt);
    expect(await stored()).toBe(6);
    expect(b.stats()).toMatchObject({ queuedEvents: 0, commits: 2, committedEvents: 6, failedCommits: 0 });
  });

  it('hands a batch over at once when maxBatchEvents wait, without waiting for the interval', async () => {
    const b = make({ maxBatchEvents: 10 });
    await Promise.all([b.submit(events(1)), vi.advanceTimersByTimeAsync(0)]);
    expect(batches()).toEqual([1]);
    const small = b.submit(events(3));
    expect(batches()).toEqual([1]); // 3 < 10: waits for the interval
    const filling = b.submit(events(7));
    expect(batches()).toEqual([1, 10]); // 10 reached: handed over in the same turn
    expect(vi.getTimerCount()).toBe(0); // the interval's timer is gone with it
    await Promise.all([small, filling]);
    expect(await stored()).toBe(11);
  });

  it('refuses new work past maxQueuedEvents (in flight included), but not an admitted piece', async () => {
    const b = make({ maxQueuedEvents: 10 });
    // One request larger than the bound is taken when nothing waits.
    await Promise.all([b.submit(events(25)), vi.advanceTimersByTimeAsync(0)]);
    expect(await stored()).toBe(25);

    await vi.advanceTimersByTimeAsync(1000);
    const eight = b.submit(events(8));
    const refused = b.submit(events(3)).catch((e: unknown) => e);
    const two = b.submit(events(2)); // 8 + 2 = 10: still within
    const admitted = b.submit(events(1), { admitted: true }); // a later piece of an accepted request
    const err = await refused;
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(503);
    expect((err as AppError).headers).toEqual({ 'Retry-After': '1' });
    expect(b.queuedEvents).toBe(11);

    await vi.advanceTimersByTimeAsync(0);
    expect(batches()).toEqual([25, 11]);
    // Handed over but not yet committed: still counted against the bound.
    await expect(b.submit(events(1))).rejects.toMatchObject({ status: 503 });
    await Promise.all([eight, two, admitted]);
    expect(b.queuedEvents).toBe(0);
    const after = b.submit(events(5)); // room again once committed
    await vi.advanceTimersByTimeAsync(1000);
    await after;
    expect(await stored()).toBe(25 + 11 + 5);
  });

  it('close commits what waits at once and refuses what comes after', async () => {
    const b = make();
    await Promise.all([b.submit(events(1)), vi.advanceTimersByTimeAsync(0)]);
    const waiting = b.submit(events(4));
    expect(batches()).toEqual([1]);
    const closed = b.close();
    expect(batches()).toEqual([1, 4]); // no interval waited for
    await closed;
    await waiting;
    expect(await stored()).toBe(5);
    await expect(b.submit(events(1))).rejects.toMatchObject({ status: 503 });
    expect(batches()).toEqual([1, 4]);
  });
});
