import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { event } from './filter-store.js';

const dir = mkdtempSync(path.join(tmpdir(), 'logscope-idle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const walBytes = () => {
  const wal = path.join(dir, 'events.duckdb.wal');
  return statSync(wal, { throwIfNoEntry: false })?.size ?? 0;
};

it('writes a large WAL into the main file once appends pause, and keeps every event', async () => {
  const store = await DuckDbEventStore.open({
    dataDir: dir,
    memoryLimit: '256MB',
    checkpointThreshold: '1GB',
  });
  try {
    const base = Date.UTC(2026, 10, 25);
    // About 12 MB of messages in a few appends: past the 8 MB an idle checkpoint waits for.
    for (let b = 0; b < 4; b++) {
      await store.append(
        Array.from({ length: 3000 }, (_, i) =>
          event(`e${b}-${i}`, {
            ts: base + b * 3000 + i,
            message: `${b}-${i} ${'x'.repeat(1000)} ${Math.random()}`,
          }),
        ),
      );
    }
    expect(walBytes()).toBeGreaterThan(8 * 1024 * 1024);
    await expect.poll(walBytes, { timeout: 15_000, interval: 250 }).toBeLessThan(1024 * 1024);
    expect((await store.stats()).events).toBe(12_000);
  } finally {
    await store.close();
  }
});

it("gives freed memory back from DuckDB's allocator thread, not only after a large query", async () => {
  const store = await DuckDbEventStore.open({
    dataDir: ':memory:',
    memoryLimit: '256MB',
    checkpointThreshold: '16MB',
  });
  try {
    const rows = await store.runSql("SELECT current_setting('allocator_background_threads') AS on");
    expect(rows[0]?.on).toBe(true);
  } finally {
    await store.close();
  }
});
