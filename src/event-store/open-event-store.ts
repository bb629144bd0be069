import type { Config } from '../config/config.js';
import { ClickHouseEventStore } from './clickhouse/clickhouse-event-store.js';
import type { EventStore } from './event-store.js';
import { WorkerEventStore } from './worker/worker-event-store.js';

/**
 * The one factory choosing the event store from config (API.md §16 `eventStoreUrl`):
 * empty, DuckDB in the data dir (on a worker thread, ADR 0005); `clickhouse://…`,
 * ClickHouse (ADR 0006).
 */
export function openEventStore(config: Config): Promise<EventStore> {
  if (config.eventStoreUrl) return ClickHouseEventStore.open({ url: config.eventStoreUrl });
  return WorkerEventStore.open({
    dataDir: config.dataDir,
    memoryLimit: config.duckdbMemoryLimit,
    checkpointThreshold: config.duckdbCheckpointThreshold,
  });
}
