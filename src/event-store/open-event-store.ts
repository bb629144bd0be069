import type { Config } from '../config/config.js';
import { isDataDirLocked } from '../errors/startup.js';
import type { EventStore } from './event-store.js';
import type { WorkerStoreConfig } from './worker/protocol.js';
import { WorkerEventStore } from './worker/worker-event-store.js';

/**
 * How long a start waits for the process that held the data dir to let go of its lock.
 * A server killed (`kill -9`) is gone only once the kernel has torn it down: a large one,
 * or one in the middle of disk writes (a report spilling its sort), holds the lock for a
 * moment after the kill, and a restart at once found it held and stopped for good. A
 * server that really runs there keeps it: the start then stops with the same line as
 * before, this much later.
 */
const LOCK_WAIT_MS = 10_000;
const LOCK_RETRY_MS = 200;

/**
 * The one factory choosing the event store from config (the `eventStoreUrl` setting):
 * empty, DuckDB in the data dir; `clickhouse://…`, ClickHouse (ADR 0006).
 */
export function openEventStore(config: Config): Promise<EventStore> {
  // Both in a worker thread (ADR 0005): the store's own work leaves the event loop free.
  if (config.eventStoreUrl)
    return WorkerEventStore.open({ kind: 'clickhouse', options: { url: config.eventStoreUrl } });
  return openWhenUnlocked({
    kind: 'duckdb',
    options: {
      dataDir: config.dataDir,
      memoryLimit: config.duckdbMemoryLimit,
      checkpointThreshold: config.duckdbCheckpointThreshold,
      coldDir: config.coldDir,
    },
  });
}

/** Opens the DuckDB store, trying again for up to `LOCK_WAIT_MS` while another process holds its file. */
async function openWhenUnlocked(store: WorkerStoreConfig): Promise<EventStore> {
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      return await WorkerEventStore.open(store);
    } catch (err) {
      if (!isDataDirLocked(err) || Date.now() >= until) throw err;
      await new Promise((resolve) => setTimeout(resolve, LOCK_RETRY_MS));
    }
  }
}
