import { DuckDbEventStore } from '../../src/event-store/duckdb/duckdb-event-store.js';
import { WorkerEventStore } from '../../src/event-store/worker/worker-event-store.js';
import type { TestApp } from './app.js';

/** Reads stored events back with plain SQL, beside the API (tests only). */
export async function storedEvents(t: TestApp, where = 'true', params: string[] = []) {
  const store = t.rt.events;
  if (!(store instanceof DuckDbEventStore || store instanceof WorkerEventStore))
    throw new Error('DuckDB store expected');
  return store.runSql(
    `SELECT ev_id, message, host, app, severity, ts, received_at, fields FROM events WHERE ${where} ORDER BY ev_id`,
    params,
  );
}
