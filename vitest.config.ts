import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    setupFiles: ['test/support/fast-check-seed.ts'],
  },
});
