import { defineConfig } from 'vitest/config';
import { TEST_KINDS } from './test/kinds.js';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // One project per kind of test (test/kinds.ts): `vitest run --project unit`.
    projects: Object.entries(TEST_KINDS).map(([name, folders]) => ({
      extends: true,
      test: { name, include: folders.map((f) => `test/${f}/**/*.test.ts`) },
    })),
  },
});
