import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The kinds of test, each the folder of test/ that holds it (test/<kind>/<feature>/…):
 * - unit: pure code in the process, no store, server or browser (`npm run test:unit`)
 * - event-store: the event stores (DuckDB; ClickHouse when a test URL is given) and what
 *   runs queries straight on them
 * - metadata: the metadata stores (SQLite; PostgreSQL when a test URL is given)
 * - api: a whole app over HTTP and the websocket (`app.inject`, or a listening server)
 * - process: real processes (the CLI, the serving process, cluster nodes, log shippers)
 * - browser: the web UI in Chromium
 * `test/helpers` and `test/fixtures` hold no tests. A file whose name ends in
 * `.timed.test.ts` asserts a wall-clock bound; CI runs those one at a time after the rest
 * (scripts/ci/run-suite.sh).
 */
export const TEST_KINDS = ['unit', 'event-store', 'metadata', 'api', 'process', 'browser'] as const;

export default defineConfig({
  // The web UI's alias for src/shared (ui/vite.config.ts), for tests that import UI modules.
  resolve: { alias: { '@shared': fileURLToPath(new URL('./src/shared', import.meta.url)) } },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One project per kind of test, the kind being the first folder under test/:
    // `vitest run --project unit` runs test/unit/**.
    projects: TEST_KINDS.map((name) => ({
      extends: true,
      test: {
        name,
        include: [`test/${name}/**/*.test.ts`],
        // A browser test's steps run axe over every rule and take screenshots: seconds
        // each, several times that while CI runs the other projects beside it. A page's
        // answer waited for (`expect.poll`) gets 10 s, not 1: the page answers after the
        // server does, which under a full suite's load took past a second.
        ...(name === 'browser' ? { testTimeout: 60_000, expect: { poll: { timeout: 10_000 } } } : {}),
      },
    })),
  },
});
