/**
 * The tests by kind: each folder of `test/` belongs to one vitest project (vitest.config.ts).
 * - unit: pure code in the process, no store, server or browser (`npm run test:unit`)
 * - event-store: the event stores (DuckDB; ClickHouse when a test URL is given) and what
 *   runs queries straight on them
 * - metadata: the metadata stores (SQLite; PostgreSQL when a test URL is given)
 * - api: a whole app over HTTP and the websocket (`app.inject`, or a listening server)
 * - process: real processes (the CLI, the serving process, cluster nodes, log shippers)
 * - browser: the web UI in Chromium
 * A file whose name ends in `.timed.test.ts` asserts a wall-clock bound; CI runs those one
 * at a time after the rest (scripts/ci/run-suite.sh).
 */
export const TEST_KINDS = {
  unit: ['filter', 'ingest', 'export', 'ui', 'unit', 'domain', 'enrich'],
  'event-store': ['event-store', 'query'],
  metadata: ['metadata'],
  api: ['http', 'query-http', 'ingest-http', 'reports', 'alerts', 'live'],
  process: ['ops', 'cli', 'cluster', 'shippers'],
  browser: ['e2e'],
} as const;

/** Folders of `test/` that hold no tests of their own. */
export const SUPPORT_FOLDERS = ['helpers', 'fixtures'];
