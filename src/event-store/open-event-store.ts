import type { Config } from '../config/config.js';
import type { EventStore } from './event-store.js';
import { WorkerEventStore } from './worker/worker-event-store.js';

/**
 * The one factory choosing the event store from config (the `eventStoreUrl` setting):
 * empty, DuckDB in the data dir; `clickhouse://…`, ClickHouse (ADR 0006).
 */
export function openEventStore(config: Config): Promise<EventStore> {
  // Both in a worker thread (ADR 0005): the store's own work leaves the event loop free.
  if (config.eventStoreUrl)
    return WorkerEventStore.open({ kind: 'clickhouse', options: { url: config.eventStoreUrl } });
  return WorkerEventStore.open({
    kind: 'duckdb',
    options: {
      dataDir: config.dataDir,
      memoryLimit: config.duckdbMemoryLimit,
      checkpointThreshold: config.duckdbCheckpointThreshold,
    },
  });
}
