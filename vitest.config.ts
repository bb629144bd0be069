import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { TEST_KINDS } from './test/kinds.js';

export default defineConfig({
  // The web UI's alias for src/shared (ui/vite.config.ts), for tests that import UI modules.
  resolve: { alias: { '@shared': fileURLToPath(new URL('./src/shared', import.meta.url)) } },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One project per kind of test (test/kinds.ts): `vitest run --project unit`.
    projects: Object.entries(TEST_KINDS).map(([name, folders]) => ({
      extends: true,
      test: {
        name,
        include: folders.map((f) => `test/${f}/**/*.test.ts`),
        // A browser test's steps run axe over every rule and take screenshots: seconds
        // each, several times that while CI runs the other projects beside it.
        ...(name === 'browser' ? { testTimeout: 60_000 } : {}),
      },
    })),
  },
});
